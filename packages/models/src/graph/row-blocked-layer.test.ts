import type { PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createPolicyTrainer } from '../engine/training-step';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { createRandomModel } from '../weights/random-model';
import { loraLayoutOf } from './lora-inputs';
import { buildPolicyTrainingGraph, nllObjective } from './policy-training-graph';
import type { RowBlockSettings } from './row-blocked-layer';
import { relativeDifference } from './gradient-difference.test-helper';

// Row-blocked layers (blocks of 4 rows, so the padded 9-token rows run three blocks, the last
// one partial) against the unblocked graph: same loss and gradients, LoRA on every linear and
// full-parameter, with and without recomputation, on a right-padded batch with Qwen3's q/k norm
// and grouped-query attention.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const config = { ...getModelPreset('tiny'), vocabSize: 32, hiddenSize: 16, intermediateSize: 24, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8, tieWordEmbeddings: false };
const model = createRandomModel(config, 11, { std: 0.3, normNoise: 0.1 });
const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3, 4, 5], [6, 7]],
  completionIds: [[8, 9, 10], [11, 12, 13, 14, 15, 16, 17]],
  tokenWeights: [[0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]],
  objective: { kind: 'nll' },
};
const rowBlocks: RowBlockSettings = { blockSize: 4 };

describe.each(['lora', 'full-parameter'] as const)('row-blocked layers train as unblocked ones do (%s)', (kind) => {
  it('gives the same loss and gradients, with and without recomputation', async () => {
    const loraConfig = parseLoraSettings({ rank: 2, alpha: 4, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] });
    const adapter = createLoraAdapter(config, loraConfig, 3);
    for (const matrices of adapter.matrices.values()) {
      for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = 0.05 * Math.sin(index + 1);
    }
    const run = async (blocks: RowBlockSettings | undefined, recompute: boolean) => {
      const common = { model, runtime, objectives: [nllObjective], recompute, ...(blocks ? { rowBlocks: blocks } : {}) };
      const trainer =
        kind === 'lora'
          ? createPolicyTrainer({ ...common, lora: loraLayoutOf(config, loraConfig) })
          : createPolicyTrainer({ ...common, weights: [...model.weights.keys()] });
      const result = await trainer.run(batch, kind === 'lora' ? adapter : undefined);
      await trainer.release();
      return result;
    };
    const expected = await run(undefined, false);
    for (const recompute of [false, true]) {
      const actual = await run(rowBlocks, recompute);
      expect(Math.abs(actual.stats.loss - expected.stats.loss)).toBeLessThan(1e-5);
      expect(actual.gradients.size).toBe(expected.gradients.size);
      expect(relativeDifference(actual.gradients, expected.gradients)).toBeLessThan(1e-4);
    }
  });
});

describe('rowBlocks off', () => {
  it('leaves the training graph as it was (the default run of short rows is unchanged)', () => {
    const build = (settings: { rowBlocks?: RowBlockSettings }) =>
      buildPolicyTrainingGraph(model, { kind: 'full', weights: [...model.weights.keys()] }, nllObjective, { kind: 'nll' }, { recompute: true, ...settings }).graph.toBytes();
    expect(Buffer.from(build({})).equals(Buffer.from(build({})))).toBe(true);
    expect(Buffer.from(build({ rowBlocks })).equals(Buffer.from(build({})))).toBe(false);
  });
});
