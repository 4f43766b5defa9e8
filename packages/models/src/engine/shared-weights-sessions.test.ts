import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime, type TensorRuntime } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { loraLayoutOf } from '../graph/lora-inputs';
import { nllObjective } from '../graph/policy-training-graph';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { loadPolicyModel } from '../policy/policy-dtype';
import { perturbLoraAdapter } from '../testing/perturb-lora';
import { saveModelFolder } from '../weights/model-folder';
import { createRandomModel } from '../weights/random-model';
import { createCausalLm } from './causal-lm';
import { generate } from './generate';
import { createPolicyTrainer } from './training-step';

/**
 * RuntimeSettings.weightPlacement 'shared' (CUDA's default) run on the CPU: the inference graph
 * (log-probs, KV-cached decoding) and the training graph (row blocks, recomputation) of one model
 * become branches of one ONNX Runtime session holding the weights once, rebuilt when the trainer's
 * graph joins. Every result must be the one separate sessions give.
 */
const root = mkdtempSync(join(tmpdir(), 'agentflow-shared-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = { ...getModelPreset('tiny'), vocabSize: 64, hiddenSize: 32, intermediateSize: 48, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8, tieWordEmbeddings: false };
const dir = join(root, 'model');
await saveModelFolder(dir, createRandomModel(config, 7, { std: 0.2, normNoise: 0.1 }), { tokenizer: null });
const lora = parseLoraSettings({ rank: 4, alpha: 8 });
const adapter = perturbLoraAdapter(createLoraAdapter(config, lora, 1), { seed: 2 });
const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3, 4, 5], [6, 7]],
  completionIds: [[8, 9, 10], [11, 12, 13, 14, 15, 16]],
  tokenWeights: [Array(3).fill(1 / 9), Array(6).fill(1 / 9)],
  objective: { kind: 'nll' },
};

async function everything(runtime: TensorRuntime, dtype: 'float32' | 'float16') {
  const model = await loadPolicyModel(dir, { dtype, device: 'cpu' });
  const lm = await createCausalLm({ model, runtime, lora: { rank: 4, alpha: 8 } });
  const before = (await lm.logprobs(batch, { adapter })).logprobs;
  // The trainer's graph joins the inference graph's weights (with 'shared', a rebuilt session).
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, lora), runtime, objectives: [nllObjective], recompute: true, rowBlocks: { blockSize: 4 } });
  const { stats, gradients } = await trainer.run(batch, adapter);
  const copies = runtime.sharedWeightCopies();
  const after = (await lm.logprobs(batch, { adapter })).logprobs;
  const requests = [{ promptIds: [1, 2, 3], maxTokens: 6, temperature: 0 }, { promptIds: [9], maxTokens: 6, temperature: 0 }];
  const generations = await generate(lm, requests, { eosTokenIds: [], adapter });
  await trainer.release?.();
  await lm.release();
  return { copies, weightBytes: [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.byteLength, 0), before, after, loss: stats.loss, gradients, tokens: generations.map((generation) => generation.tokenIds), sampled: generations.map((generation) => generation.logprobs) };
}

function expectClose(actual: number[][], expected: number[][], tolerance: number) {
  expect(actual.map((row) => row.length)).toEqual(expected.map((row) => row.length));
  const worst = Math.max(0, ...actual.flatMap((row, index) => row.map((value, position) => Math.abs(value - expected[index]![position]!))));
  expect(worst).toBeLessThan(tolerance);
}

describe("one session for a model's graphs (weightPlacement 'shared')", () => {
  for (const dtype of ['float32', 'float16'] as const) {
    it(`gives the log-probs, decoded tokens, loss and LoRA gradients of separate sessions (${dtype} weights)`, async () => {
      const separate = await everything(createRuntime({ device: 'cpu', intraOpThreads: 1, weightPlacement: 'per-session' }), dtype);
      const shared = await everything(createRuntime({ device: 'cpu', intraOpThreads: 1, weightPlacement: 'shared' }), dtype);
      // One copy of the base weights for both sessions; none listed for separate sessions.
      expect(shared.copies.map((copy) => copy.sessions)).toEqual([['qwen3-inference', 'qwen3-training-nll']]);
      // The base weights (norms stay float32 beside float16 matrices); LoRA matrices are inputs.
      expect(shared.copies[0]!.bytes).toBe(shared.weightBytes);
      expect(separate.copies).toEqual([]);
      expectClose(shared.before, separate.before, 1e-5);
      expectClose(shared.after, separate.before, 1e-5);
      expect(shared.tokens).toEqual(separate.tokens);
      expectClose(shared.sampled, separate.sampled, 1e-5);
      expect(Math.abs(shared.loss - separate.loss)).toBeLessThan(1e-5);
      expect([...shared.gradients.keys()]).toEqual([...separate.gradients.keys()]);
      for (const [name, gradient] of separate.gradients) {
        const other = shared.gradients.get(name)!;
        const norm = Math.hypot(...gradient);
        expect(norm).toBeGreaterThan(0);
        expect(Math.hypot(...gradient.map((value, index) => value - other[index]!)) / norm).toBeLessThan(1e-5);
      }
    });
  }
});
