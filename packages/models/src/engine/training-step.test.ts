import { createRandom, type PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { loraLayoutOf, loraInputName } from '../graph/lora-inputs';
import { nllObjective } from '../graph/policy-training-graph';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { mergeLoraAdapter } from '../lora/peft-format';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { createRandomModel } from '../weights/random-model';
import { createCausalLm } from './causal-lm';
import { createPolicyTrainer } from './training-step';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

const config = { ...getModelPreset('tiny'), vocabSize: 32, hiddenSize: 16, intermediateSize: 24, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8, tieWordEmbeddings: false };
const model = createRandomModel(config, 5, { std: 0.3, normNoise: 0.1 });
const loraSettings = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] as const };
const loraConfig = parseLoraSettings({ ...loraSettings, targetModules: [...loraSettings.targetModules] });
const layout = loraLayoutOf(config, loraConfig);

function randomAdapter(seed: number) {
  const adapter = createLoraAdapter(config, loraConfig, seed);
  const random = createRandom(seed + 1);
  for (const matrices of adapter.matrices.values()) for (let i = 0; i < matrices.b.length; i++) matrices.b[i] = 0.3 * random.normal();
  return adapter;
}

const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3], [4]],
  completionIds: [[5, 6], [7, 8, 9, 10]],
  tokenWeights: [[1 / 6, 1 / 6], [1 / 6, 1 / 6, 1 / 6, 1 / 6]],
  objective: { kind: 'nll' },
};

describe('LoRA graphs', () => {
  it('an adapter with B = 0 changes nothing, and an adapter equals its merged weights', async () => {
    const lm = await createCausalLm({ model, runtime, lora: { ...loraSettings, targetModules: [...loraSettings.targetModules] } });
    const zero = createLoraAdapter(config, loraConfig, 3);
    const base = await lm.logprobs(batch);
    const withZero = await lm.logprobs(batch, { adapter: zero });
    expect(withZero.logprobs).toEqual(base.logprobs);
    const adapter = randomAdapter(9);
    const adapted = await lm.logprobs(batch, { adapter });
    const merged = mergeLoraAdapter(model.weights, adapter);
    batch.promptIds.forEach((prompt, row) => {
      const expected = referenceCompletionLogprobs(config, merged, prompt, batch.completionIds[row]!);
      adapted.logprobs[row]!.forEach((value, index) => {
        expect(Math.abs(value - expected[index]!)).toBeLessThan(1e-4);
      });
      expect(Math.abs(adapted.logprobs[row]![0]! - base.logprobs[row]![0]!)).toBeGreaterThan(1e-3);
    });
    await lm.release();
  });

  it('adapter gradients of the NLL match central finite differences of the reference', async () => {
    const trainer = createPolicyTrainer({ model, lora: layout, runtime, objectives: [nllObjective] });
    const adapter = randomAdapter(4);
    const { stats, gradients } = await trainer.run(batch, adapter);
    const loss = (weights: typeof model.weights) => {
      let total = 0;
      batch.promptIds.forEach((prompt, row) => {
        referenceCompletionLogprobs(config, weights, prompt, batch.completionIds[row]!).forEach((value) => {
          total -= value / 6;
        });
      });
      return total;
    };
    expect(Math.abs(stats.loss - loss(mergeLoraAdapter(model.weights, adapter)))).toBeLessThan(1e-4);
    expect(stats.tokens).toBe(6);
    const random = createRandom(1);
    let checked = 0;
    for (const [path, matrices] of adapter.matrices) {
      for (const which of ['A', 'B'] as const) {
        const values = which === 'A' ? matrices.a : matrices.b;
        const gradient = gradients.get(loraInputName(path, which))!;
        expect(gradient.length).toBe(values.length);
        for (let probe = 0; probe < 2; probe++) {
          const index = random.int(0, values.length - 1);
          const original = values[index]!;
          const epsilon = 1e-4;
          values[index] = original + epsilon;
          const plus = loss(mergeLoraAdapter(model.weights, adapter));
          values[index] = original - epsilon;
          const minus = loss(mergeLoraAdapter(model.weights, adapter));
          values[index] = original;
          const numeric = (plus - minus) / (2 * epsilon);
          expect(Math.abs(gradient[index]! - numeric)).toBeLessThan(1e-4 + 1e-3 * Math.abs(numeric));
          checked++;
        }
      }
    }
    expect(checked).toBe(24); // 2 layers x 3 modules x {A, B} x 2 probes
    await trainer.release();
  });

  it('recomputing layer activations in the backward gives the same loss and gradients', async () => {
    const adapter = randomAdapter(6);
    const kept = createPolicyTrainer({ model, lora: layout, runtime, objectives: [nllObjective] });
    const recomputed = createPolicyTrainer({ model, lora: layout, runtime, objectives: [nllObjective], recompute: true });
    const [a, b] = [await kept.run(batch, adapter), await recomputed.run(batch, adapter)];
    expect(b.stats.loss).toBeCloseTo(a.stats.loss, 6);
    expect([...b.gradients.keys()]).toEqual([...a.gradients.keys()]);
    for (const [name, gradient] of a.gradients) {
      const other = b.gradients.get(name)!;
      gradient.forEach((value, index) => {
        expect(Math.abs(other[index]! - value)).toBeLessThan(1e-6 + 1e-5 * Math.abs(value));
      });
    }
    await kept.release();
    await recomputed.release();
  });
});
