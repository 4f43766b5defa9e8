import { longestDemonstration } from '@agentflow/eval';
import { demonstrationSamples } from '@agentflow/flow';
import { afterAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../config/schema';
import { createRunAgent } from './agent';
import { guardedTaskSource } from './pipeline-context';
import { assertRunnable, preflightProblems } from './preflight';

// policy.maxSteps below the demonstrations' length used to pass the schema and fail the warm
// start with INTERNAL; the pre-flight check refuses it, and its bound is the loop's own.
// The world where every mistake is fatal: its demonstrations take 3 or 4 decisions.
const task = { kind: 'world', seed: 3, entities: 8, trainTasks: 20, testTasks: 4, levels: [1, 2], decoyRate: 0, stepSlack: null, teacher: { errorRate: 0, recoveryRate: 0 } };
const configWith = (maxSteps: number) => runConfigSchema.parse({ task, policy: { maxSteps }, warmStart: { check: { heldOutTasks: 4 } } });
const guarded = guardedTaskSource(configWith(5));
const tools = guarded.source.createTools({ pythonSlots: 2 });
afterAll(() => tools.dispose());

/** The warm start's replay of every demonstration under `maxSteps`. */
function replay(maxSteps: number) {
  const config = configWith(maxSteps);
  return demonstrationSamples(guarded.source.split('train'), guarded.source, (model) => createRunAgent({ config, tools, fixedModel: undefined }, model));
}

describe('the pre-flight check of runnable settings', () => {
  it('refuses policy.maxSteps below the longest demonstration, naming the key and the bound', () => {
    expect(() => assertRunnable(configWith(2), guarded, 'run.yaml')).toThrow(
      /^run\.yaml: policy\.maxSteps: 2 planner decisions are fewer than the 4 the demonstration of train-\d+ takes \(its finish included\); set policy\.maxSteps to at least 4$/,
    );
    expect(preflightProblems(configWith(4), guarded)).toEqual([]);
  });

  it('refuses a warm-start check that holds back every training task', () => {
    const config = runConfigSchema.parse({ task, warmStart: { check: { heldOutTasks: 20 } } });
    expect(() => assertRunnable(config, guarded, 'run.yaml')).toThrow(
      'run.yaml: warmStart.check.heldOutTasks: 20 held-back tasks leave none of the 20 training task(s) to demonstrate; hold back fewer, or set warmStart.check to null',
    );
    expect(preflightProblems(runConfigSchema.parse({ task, warmStart: { check: { heldOutTasks: 19 } } }), guarded)).toEqual([]);
  });

  it('draws its bound where the real loop does: the replay passes at the bound and fails one below', async () => {
    await expect(replay(4)).resolves.not.toHaveLength(0);
    await expect(replay(3)).rejects.toThrow(/The demonstration of train-\d+ answered/);
  });

  it('bounds a world with decoys and recoveries by its longer demonstrations, says why, and replays them at that bound', async () => {
    const decoys = { ...task, decoyRate: 0.5, stepSlack: 1, teacher: { errorRate: 0, recoveryRate: 0.5 } };
    const decoyConfig = (maxSteps: number) => runConfigSchema.parse({ task: decoys, policy: { maxSteps }, warmStart: { check: { heldOutTasks: 4 } } });
    const world = guardedTaskSource(decoyConfig(5));
    const bound = longestDemonstration(world.source)!.steps;
    // Two lookups, python and finish are 4; checks of stale lookups and recovered mistakes add to them.
    expect(bound).toBeGreaterThan(4);
    expect(() => assertRunnable(decoyConfig(bound - 1), world, 'run.yaml')).toThrow(
      new RegExp(
        `^run\\.yaml: policy\\.maxSteps: ${bound - 1} planner decisions are fewer than the ${bound} the demonstration of train-\\d+ takes \\(its finish included, a check after each stale lookup \\(task\\.decoyRate\\), a decision more for a recovered mistake \\(task\\.teacher\\.recoveryRate\\)\\); set policy\\.maxSteps to at least ${bound}$`,
      ),
    );
    expect(preflightProblems(decoyConfig(bound), world)).toEqual([]);
    const worldTools = world.source.createTools({ pythonSlots: 2 });
    try {
      const config = decoyConfig(bound);
      const samples = await demonstrationSamples(world.source.split('train'), world.source, (model) => createRunAgent({ config, tools: worldTools, fixedModel: undefined }, model));
      expect(samples.length).toBeGreaterThan(0);
    } finally {
      await worldTools.dispose();
    }
  });
});
