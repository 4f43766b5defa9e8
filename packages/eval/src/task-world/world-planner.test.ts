import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadQwen3Config, parameterCount } from '@agentflow/models';
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
  ropeTheta: 10000,
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

    // A plain random Qwen3, as transformers initialises one: normal(0, 0.02) matrices (the
    // embeddings included, no shared or word-class directions), every norm exactly 1, no
    // identity added to v_proj / o_proj.
    const { weights } = await loadModel(dir);
    const std = (data: ArrayLike<number>) => Math.sqrt(Array.from(data).reduce((sum, value) => sum + value * value, 0) / data.length);
    const mean = (data: ArrayLike<number>) => Array.from(data).reduce((sum, value) => sum + value, 0) / data.length;
    const embedding = weights.get('model.embed_tokens.weight')!.data;
    expect(std(embedding)).toBeCloseTo(0.02, 3);
    expect(Math.abs(mean(embedding))).toBeLessThan(1e-3);
    for (const [name, tensor] of weights) {
      if (name.endsWith('norm.weight')) expect(new Set(tensor.data), name).toEqual(new Set([1]));
    }
    const vProj = weights.get('model.layers.0.self_attn.v_proj.weight')!;
    const columns = vProj.shape[1]!;
    const diagonal = Array.from({ length: vProj.shape[0]! }, (_, row) => vProj.data[row * columns + (row % columns)]!);
    expect(std(diagonal)).toBeLessThan(0.04);
  });
});
