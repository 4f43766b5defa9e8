import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, type StepScorer, type StepScoringInput, createRandom } from '@agentflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { DapoConfigInput } from '../config/dapo-config';
import type { TabularPolicy } from '../testing';
import {
  actionLetter,
  createTwoActionPolicy,
  createTwoActionRollouts,
  scoreTwoAction,
  successRate,
  twoActionPrompts,
} from './__fixtures__/two-action-task';
import { type DapoTrainerSettings, createDapoTrainer } from './dapo-trainer';
import type { DapoStepMetrics } from './step-metrics';
import type { TwoActionPrompt } from './__fixtures__/two-action-task';

const prompts = twoActionPrompts(8);
const config: DapoConfigInput = {
  groupSize: 8,
  promptsPerBatch: 4,
  promptsPerMiniBatch: 2,
  microBatchRows: 3,
  updateEpochs: 2,
  learningRate: 0.1,
  warmupSteps: 2,
  totalSteps: 40,
  checkpointEvery: 4,
  evaluateEvery: 5,
  dynamicSampling: { kind: 'refill', maxRounds: 30 },
  overlong: { maxLength: 64, cacheLength: 16 },
};

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const temporaryFolder = () => {
  const folder = mkdtempSync(join(tmpdir(), 'dapo-loop-'));
  folders.push(folder);
  return folder;
};

type Overrides = Partial<DapoTrainerSettings<TwoActionPrompt>> & { policy?: TabularPolicy };

function setup(seed: number, overrides: Overrides = {}, extraConfig: DapoConfigInput = {}) {
  const policy = overrides.policy ?? createTwoActionPolicy({ prompts: prompts.length + 1 });
  const metrics: DapoStepMetrics[] = [];
  const trainer = createDapoTrainer<TwoActionPrompt>({
    config: { ...config, ...extraConfig },
    policy,
    prompts,
    sampleRollouts: createTwoActionRollouts(policy),
    scoreOutcome: scoreTwoAction,
    random: createRandom(seed),
    evaluate: async () => ({ success: successRate(policy, prompts) }),
    onMetrics: (step) => {
      metrics.push(step);
    },
    ...overrides,
  });
  return { policy, trainer, metrics };
}

/** Runs until the expected success rate passes 95% and returns the step it happened at. */
async function trainUntilSuccess(seed: number, extraConfig: DapoConfigInput = {}, overrides: Overrides = {}) {
  const { policy, trainer, metrics } = setup(seed, overrides, extraConfig);
  expect(successRate(policy, prompts)).toBe(0.5);
  let reachedAt: number | null = null;
  while (trainer.step < trainer.config.totalSteps && reachedAt === null) {
    await trainer.run({ untilStep: trainer.step + 1 });
    if (successRate(policy, prompts) > 0.95) reachedAt = trainer.step;
  }
  return { reachedAt, policy, metrics };
}

const withoutTiming = (metrics: DapoStepMetrics[]) => metrics.map(({ seconds: _s, tokensPerSecond: _t, ...rest }) => rest);

describe('createDapoTrainer on a two-action task (exact-gradient softmax policy)', () => {
  it('moves the success rate from chance to > 95% within 25 steps, deterministically', async () => {
    const first = await trainUntilSuccess(7);
    expect(first.reachedAt).not.toBeNull();
    expect(first.reachedAt as number).toBeLessThanOrEqual(25);
    const second = await trainUntilSuccess(7);
    expect(second.reachedAt).toBe(first.reachedAt);
    expect(second.policy.parameters()).toEqual(first.policy.parameters());
    expect(withoutTiming(second.metrics)).toEqual(withoutTiming(first.metrics));

    const firstStep = first.metrics[0] as DapoStepMetrics;
    expect(firstStep.groupsKept).toBe(4);
    expect(firstStep.completions).toBe(32);
    expect(firstStep.optimizerUpdates).toBe(4); // 2 mini-batches x 2 epochs
    expect(firstStep.accuracy).toBeGreaterThan(0.2);
    expect(firstStep.accuracy).toBeLessThan(0.8);
    // The first update of each step starts at ratio 1; later ones move and some tokens clip.
    expect(first.metrics.some((step) => (step.clipFraction as number) > 0)).toBe(true);
    expect(first.metrics.every((step) => step.approxKl !== null && step.entropy !== null && step.gradNorm > 0)).toBe(true);
    // The sampler and the trainer are the same model here: their log-probs agree.
    expect(first.metrics.every((step) => (step.samplerMismatch as number) < 1e-12)).toBe(true);
    // Near the end most groups are all-correct: dynamic sampling drops them and refills.
    const last = first.metrics.at(-1) as DapoStepMetrics;
    expect(last.accuracy).toBeGreaterThan(0.8);
    expect(first.metrics.reduce((sum, step) => sum + step.rolloutsDropped, 0)).toBeGreaterThan(0);
    expect(last.rolloutsDropped).toBe(last.groupsDropped * 8);
    expect(first.metrics.filter((step) => step.evaluation !== undefined).map((step) => step.step)).toEqual(
      first.metrics.map((step) => step.step).filter((step) => step % 5 === 0),
    );
  });

  it('reports how far the policy has moved from its reference, which the KL term holds back', async () => {
    const run = async (klCoefficient: number) => {
      const reference = createTwoActionPolicy({ prompts: prompts.length + 1 });
      const { trainer, metrics } = setup(3, { referencePolicy: reference }, { klCoefficient, totalSteps: 8 });
      await trainer.run();
      return metrics.map((step) => step.referenceKl as number);
    };
    const free = await run(0);
    const held = await run(1);
    // Step 1 samples from the reference itself; then the policy moves away.
    expect(free[0]).toBeCloseTo(0, 12);
    expect(free.at(-1)).toBeGreaterThan(0.01);
    expect(held.at(-1)).toBeLessThan(free.at(-1) as number);
    const { trainer, metrics } = setup(3, {}, { totalSteps: 1 });
    await trainer.run();
    expect(metrics[0]?.referenceKl).toBeNull();
  });

  it('learns with process credit from a StepScorer on two-step trajectories', async () => {
    const finishPromptId = prompts.length;
    const seen: StepScoringInput[] = [];
    const scorer: StepScorer = {
      // A PRM that knows the right pick for each question and rates the finish step 0.5.
      score: async (inputs) =>
        inputs.map((input) => {
          seen.push(input);
          if (input.action?.action === 'finish') return 0.5;
          const prompt = prompts[Number(input.question.split(' ')[1])] as TwoActionPrompt;
          return input.action?.action === actionLetter(prompt.correct) ? 0.9 : 0.1;
        }),
    };
    const policyHolder = createTwoActionPolicy({ prompts: prompts.length + 1 });
    const { reachedAt } = await trainUntilSuccess(
      11,
      { credit: { kind: 'mix', lambda: 0.5, process: { kind: 'process-sum' } } },
      {
        policy: policyHolder,
        sampleRollouts: createTwoActionRollouts(policyHolder, { finishPromptId }),
        stepScorer: scorer,
      },
    );
    expect(reachedAt).not.toBeNull();
    expect(reachedAt as number).toBeLessThanOrEqual(25);
    // Each scored step carries the planner's prompt and raw completion (for a PRM reading the planner's format).
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((input) => Array.isArray(input.prompt) && typeof input.completion === 'string')).toBe(true);
  });

  it('a killed run resumed from its checkpoint ends with the same parameters as an uninterrupted run', async () => {
    const uninterrupted = setup(21, { checkpointDir: temporaryFolder() }, { totalSteps: 10 });
    await uninterrupted.trainer.run();

    const dir = temporaryFolder();
    const crashing = setup(21, {
      checkpointDir: dir,
      onMetrics: (metrics) => {
        // Dies after step 6, before that step is checkpointed: the last checkpoint is step 4.
        if (metrics.step === 6) throw new Error('simulated kill');
      },
    }, { totalSteps: 10 });
    await expect(crashing.trainer.run()).rejects.toThrow('simulated kill');
    expect(readdirSync(dir).sort()).toEqual(['latest.json', 'step-000004']);

    // A new process: a fresh policy and a random source whose state the checkpoint overwrites.
    const resumed = setup(99, { checkpointDir: dir }, { totalSteps: 10 });
    expect(await resumed.trainer.resume()).toBe(4);
    await resumed.trainer.run();
    expect(resumed.trainer.step).toBe(10);
    expect(resumed.policy.parameters()).toEqual(uninterrupted.policy.parameters());
    expect(withoutTiming(resumed.metrics)).toEqual(withoutTiming(uninterrupted.metrics.slice(4)));
  });

  it('commits each step once, after the checkpoint that holds it, across kills before and during a commit', async () => {
    const uninterrupted: DapoStepMetrics[] = [];
    await setup(21, { checkpointDir: temporaryFolder(), onCommitted: (steps) => void uninterrupted.push(...steps) }, { totalSteps: 10 }).trainer.run();
    expect(uninterrupted.map((metrics) => metrics.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const dir = temporaryFolder();
    // The durable record, keyed by step as a metrics file is.
    const record = new Map<number, DapoStepMetrics>();
    const deliveries: number[][] = [];
    const commit = (steps: readonly DapoStepMetrics[]) => {
      deliveries.push(steps.map((metrics) => metrics.step));
      for (const metrics of steps) record.set(metrics.step, metrics);
    };
    // First process: dies at step 6, before its checkpoint (the last one is step 4): 5 and 6 are never committed.
    const first = setup(21, { checkpointDir: dir, onCommitted: commit, onMetrics: (metrics) => { if (metrics.step === 6) throw new Error('simulated kill'); } }, { totalSteps: 10 });
    await expect(first.trainer.run()).rejects.toThrow('simulated kill');
    expect(deliveries).toEqual([[1, 2, 3, 4]]);
    // Second process: dies inside the commit of step 8's checkpoint, after recording it.
    const second = setup(99, { checkpointDir: dir, onCommitted: (steps) => { commit(steps); if (steps.at(-1)?.step === 8) throw new Error('killed while committing'); } }, { totalSteps: 10 });
    expect(await second.trainer.resume()).toBe(4);
    await expect(second.trainer.run()).rejects.toThrow('killed while committing');
    // Third process: step 8's checkpoint is delivered again (its commit never finished), then training goes on.
    const third = setup(7, { checkpointDir: dir, onCommitted: commit }, { totalSteps: 10 });
    expect(await third.trainer.resume()).toBe(8);
    await third.trainer.run();
    expect(deliveries).toEqual([[1, 2, 3, 4], [5, 6, 7, 8], [5, 6, 7, 8], [9, 10]]);
    // Keyed by step, the record is the uninterrupted run's.
    expect(withoutTiming([...record.values()].sort((a, b) => a.step - b.step))).toEqual(withoutTiming(uninterrupted));
    // A fourth resume after a finished commit delivers nothing again.
    const fourth = setup(7, { checkpointDir: dir, onCommitted: commit }, { totalSteps: 10 });
    expect(await fourth.trainer.resume()).toBe(10);
    expect(deliveries).toHaveLength(4);
  });

  it('checkpoints and commits the steps that ran when training cannot go on', async () => {
    const dir = temporaryFolder();
    const committed: number[] = [];
    let calls = 0;
    const policy = createTwoActionPolicy({ prompts: prompts.length + 1 });
    const rollouts = createTwoActionRollouts(policy);
    const trainer = createDapoTrainer<TwoActionPrompt>({
      config: { ...config, totalSteps: 10, dynamicSampling: { kind: 'refill', maxRounds: 1 } },
      policy,
      prompts,
      // From the third step on every group is uniform: dynamic sampling gives up.
      sampleRollouts: async (prompt, count, random) => {
        calls++;
        const trajectories = await rollouts(prompt, count, random);
        return calls > 8 ? trajectories.map((trajectory) => ({ ...trajectory, answer: trajectories[0]!.answer })) : trajectories;
      },
      scoreOutcome: scoreTwoAction,
      random: createRandom(5),
      checkpointDir: dir,
      onCommitted: (steps) => void committed.push(...steps.map((metrics) => metrics.step)),
    });
    await expect(trainer.run()).rejects.toThrow(/generation rounds/);
    expect(committed).toEqual([1, 2]);
    expect(readdirSync(dir)).toContain('step-000002');
  });

  it('refuses to resume with a config that changes the math', async () => {
    const dir = temporaryFolder();
    await setup(3, { checkpointDir: dir }, { totalSteps: 2 }).trainer.run();
    const changed = setup(3, { checkpointDir: dir }, { totalSteps: 4, epsHigh: 0.3 });
    await expect(changed.trainer.resume()).rejects.toThrow(/config changed in epsHigh/);
    expect(await setup(3, {}, {}).trainer.resume()).toBeNull();
  });

  it('fails with a clear error when every group is uniform for maxRounds rounds', async () => {
    const policy = createTwoActionPolicy({
      prompts: prompts.length,
      initialLogits: prompts.map((prompt) => (prompt.correct === 0 ? [30, 0] : [0, 30])),
    });
    const trainer = createDapoTrainer<TwoActionPrompt>({
      config: { ...config, dynamicSampling: { kind: 'refill', maxRounds: 3 } },
      policy,
      prompts,
      sampleRollouts: createTwoActionRollouts(policy),
      scoreOutcome: scoreTwoAction,
      random: createRandom(1),
    });
    const attempt = trainer.trainStep();
    await expect(attempt).rejects.toThrow(/kept 0 of 4 groups after 3 generation rounds .*96 rollouts spent on them/);
    await attempt.catch((error) => expect(AgentFlowError.hasCode(error, 'DYNAMIC_SAMPLING_EXHAUSTED')).toBe(true));
  });

  it('rejects rollouts without token ids and a wrong number of rollouts', async () => {
    const { trainer } = setup(1, {
      sampleRollouts: async (prompt, count) =>
        (await createTwoActionRollouts(createTwoActionPolicy({ prompts: prompts.length }))(prompt, count, createRandom(1))).map((trajectory) => ({
          ...trajectory,
          steps: trajectory.steps.map(({ completionTokenIds: _ids, ...step }) => step),
        })),
    });
    await expect(trainer.trainStep()).rejects.toThrow(/has no promptTokenIds\/completionTokenIds/);
    const short = setup(1, { sampleRollouts: async () => [] });
    await expect(short.trainer.trainStep()).rejects.toThrow(/returned 0 trajectories for prompt \d+; expected groupSize = 8/);
  });
});
