import type { PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createPolicyTrainer } from '../engine/training-step';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { createRandomModel } from '../weights/random-model';
import type { AttentionSettings } from './decoder-graph';
import { loraLayoutOf } from './lora-inputs';
import { nllObjective } from './policy-training-graph';
import { relativeDifference } from './gradient-difference.test-helper';

// Blocked attention (blocks of 4 query rows, so the padded 9-token rows run three blocks, the
// last one partial) against full attention: same loss and gradients, LoRA and full-parameter,
// with and without recomputation, on a right-padded batch with grouped-query attention
// (4 query heads over 2 key/value heads).
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const config = { ...getModelPreset('tiny'), vocabSize: 32, hiddenSize: 16, intermediateSize: 24, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8, tieWordEmbeddings: false };
const model = createRandomModel(config, 11, { std: 0.3, normNoise: 0.1 });
const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3, 4, 5], [6, 7]],
  completionIds: [[8, 9, 10], [11, 12, 13, 14, 15, 16, 17]],
  tokenWeights: [[0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]],
  objective: { kind: 'nll' },
};
const full: AttentionSettings = { kind: 'full' };
const blocked: AttentionSettings = { kind: 'blocked', blockSize: 4 };

describe.each(['lora', 'full-parameter'] as const)('blocked attention trains as full attention does (%s)', (kind) => {
  it('gives the same loss and gradients, with and without recomputation', async () => {
    const loraConfig = parseLoraSettings({ rank: 2, alpha: 4, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] });
    const adapter = createLoraAdapter(config, loraConfig, 3);
    for (const matrices of adapter.matrices.values()) {
      for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = 0.05 * Math.sin(index + 1);
    }
    const run = async (attention: AttentionSettings, recompute: boolean) => {
      const common = { model, runtime, objectives: [nllObjective], recompute, attention };
      const trainer =
        kind === 'lora'
          ? createPolicyTrainer({ ...common, lora: loraLayoutOf(config, loraConfig) })
          : createPolicyTrainer({ ...common, weights: [...model.weights.keys()] });
      const result = await trainer.run(batch, kind === 'lora' ? adapter : undefined);
      await trainer.release();
      return result;
    };
    const expected = await run(full, false);
    for (const recompute of [false, true]) {
      const actual = await run(blocked, recompute);
      expect(Math.abs(actual.stats.loss - expected.stats.loss)).toBeLessThan(1e-5);
      expect(actual.gradients.size).toBe(expected.gradients.size);
      expect(relativeDifference(actual.gradients, expected.gradients)).toBeLessThan(1e-4);
    }
  });
});
