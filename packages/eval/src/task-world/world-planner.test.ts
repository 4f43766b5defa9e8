import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadQwen3Config, parameterCount } from '@agentflow/models';
import { afterAll, describe, expect, it } from 'vitest';
import { createTaskWorld } from './create-task-world';
import { createWorldPlannerFolder, type WorldPlannerSample, type WorldPlannerShape, worldPlannerConfig, worldPlannerVocabCeiling } from './world-planner';

const root = mkdtempSync(join(tmpdir(), 'world-planner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The embedded default's planner block (apps/trainer configs/default.yaml).
const shape: WorldPlannerShape = {
  hiddenSize: 128,
  layers: 2,
  heads: 4,
  keyValueHeads: 4,
  intermediateSize: 256,
  embeddingStd: 0.5,
  sharedDirection: 1,
  wordClassDirection: 1,
  identityInit: 1.5,
  ropeTheta: 10000,
  qkNormGain: 3,
  bpeMerges: 300,
};

describe('the world planner', () => {
  it('is built from worldPlannerConfig, with a vocabulary under worldPlannerVocabCeiling', async () => {
    const world = createTaskWorld({ seed: 7, entities: 24, trainTasks: 200, testTasks: 20, maxValue: 9 });
    // Each decision: the question and the facts found so far as the prompt, the expert's action as the completion.
    const samples: WorldPlannerSample[] = world.demonstrations.flatMap((demonstration) =>
      demonstration.steps.map((step) => ({
        prompt: [{ role: 'user', content: `${world.task(demonstration.taskId).question}\n${world.corpus.slice(0, 3).map((document) => document.text).join('\n')}` }],
        completion: JSON.stringify(step.action),
      })),
    );
    const dir = join(root, 'planner');
    await createWorldPlannerFolder(dir, samples, shape, 0);
    const built = loadQwen3Config(dir);
    expect(built).toEqual(worldPlannerConfig(shape, built.vocabSize));
    expect(built.hiddenSize).toBe(128);
    const ceiling = worldPlannerVocabCeiling({ planner: shape, entities: 24 });
    expect(built.vocabSize).toBeLessThanOrEqual(ceiling);
    // The ceiling the doc states at the defaults; the default run's learned tokenizer has 815 ids.
    expect(ceiling).toBe(1211);
    expect(parameterCount(worldPlannerConfig(shape, ceiling)) - parameterCount(built)).toBe((ceiling - built.vocabSize) * 128);
  });
});
