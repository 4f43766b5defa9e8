import { createRandom, type PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { biasedModules } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import { getModelPreset } from '../config/presets';
import { nllObjective } from '../graph/policy-training-graph';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { createRandomModel, type DecoderModel } from '../weights/random-model';
import { createCausalLm } from './causal-lm';
import { generate } from './generate';
import { createPolicyTrainer } from './training-step';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

const network = { vocabSize: 40, hiddenSize: 24, intermediateSize: 40, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 6 };
const families: { label: string; config: DecoderConfig }[] = [
  { label: 'Qwen2: q/k/v biases, no q/k norm', config: { ...getModelPreset('tiny-qwen2'), ...network } },
  { label: 'Qwen3 with attention_bias: q/k/v/o biases and q/k norm', config: { ...getModelPreset('tiny'), ...network, headDim: 8, attentionBias: true } },
  {
    label: 'Llama: llama3 RoPE scaling, attention and MLP biases, untied',
    config: {
      ...getModelPreset('tiny-llama'),
      ...network,
      ropeTheta: 100, // head_dim 6: wavelengths 6.3, 29 and 135 positions, one of each llama3 branch against 40
      ropeScaling: { type: 'llama3', factor: 4, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 40 },
      attentionBias: true,
      mlpBias: true,
    },
  },
  { label: 'Llama: linear RoPE scaling, no biases, tied', config: { ...getModelPreset('tiny-llama'), ...network, tieWordEmbeddings: true, ropeScaling: { type: 'linear', factor: 3 } } },
];

const batch = {
  promptIds: [[1, 5, 9], [3], [7, 7, 2, 11, 4]],
  completionIds: [[4, 2, 30], [12, 0, 5, 6, 39], [8]],
};

const randomModel = (config: DecoderConfig, seed: number) => createRandomModel(config, seed, { std: 0.3, normNoise: 0.2, biasStd: 0.3 });

describe.each(families)('$label', ({ config }) => {
  it('graph log-probs match the float64 reference within 1e-4', async () => {
    const model = randomModel(config, 11);
    const lm = await createCausalLm({ model, runtime });
    const { logprobs } = await lm.logprobs(batch);
    batch.promptIds.forEach((prompt, row) => {
      const expected = referenceCompletionLogprobs(config, model.weights, prompt, batch.completionIds[row]!);
      expect(logprobs[row]!.length).toBe(expected.length);
      logprobs[row]!.forEach((value, index) => {
        expect(Math.abs(value - expected[index]!), `row ${row}, token ${index}`).toBeLessThan(1e-4);
      });
    });
    await lm.release();
  });

  it('generates with the KV cache as without it, and samples the log-probs it scores', async () => {
    const lm = await createCausalLm({ model: randomModel(config, 3), runtime });
    const greedy = batch.promptIds.map((promptIds) => ({ promptIds, maxTokens: 10, temperature: 0 }));
    const cached = await generate(lm, greedy, { eosTokenIds: [] });
    expect(cached.map((row) => row.tokenIds)).toEqual((await generate(lm, greedy, { eosTokenIds: [], useCache: false })).map((row) => row.tokenIds));
    const sampled = await generate(
      lm,
      batch.promptIds.map((promptIds, seed) => ({ promptIds, maxTokens: 10, temperature: 1, seed })),
      { eosTokenIds: [] },
    );
    const { logprobs } = await lm.logprobs({ promptIds: batch.promptIds, completionIds: sampled.map((row) => row.tokenIds) });
    sampled.forEach((row, index) => {
      row.logprobs.forEach((value, k) => {
        expect(Math.abs(value - logprobs[index]![k]!)).toBeLessThan(1e-4);
      });
    });
    await lm.release();
  });
});

const trainingBatch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3], [4]],
  completionIds: [[5, 6], [7, 8, 9, 10]],
  tokenWeights: [[1 / 6, 1 / 6], [1 / 6, 1 / 6, 1 / 6, 1 / 6]],
  objective: { kind: 'nll' },
};

function referenceLoss(model: DecoderModel): number {
  let total = 0;
  trainingBatch.promptIds.forEach((prompt, row) => {
    referenceCompletionLogprobs(model.config, model.weights, prompt, trainingBatch.completionIds[row]!).forEach((value, index) => {
      total -= trainingBatch.tokenWeights[row]![index]! * value;
    });
  });
  return total;
}

// Qwen2's q/k/v biases; Llama's q/k/v/o and gate/up/down biases.
describe.each(families.filter(({ config }) => config.architecture !== 'qwen3' && biasedModules(config).length > 0))('$label, trained in full', ({ config }) => {
  it('trains every bias, with the gradient of central finite differences of the reference', async () => {
    const model = randomModel(config, 5);
    const names = [...model.weights.keys()];
    const biases = names.filter((name) => name.endsWith('.bias'));
    expect(biases.length).toBe(config.numHiddenLayers * biasedModules(config).length);
    expect(biases.length).toBe(config.numHiddenLayers * (config.architecture === 'qwen2' ? 3 : 7));
    const trainer = createPolicyTrainer({ model, weights: names, runtime, objectives: [nllObjective] });
    const { stats, gradients } = await trainer.run(trainingBatch);
    expect(Math.abs(stats.loss - referenceLoss(model))).toBeLessThan(1e-4);
    const random = createRandom(1);
    for (const name of biases) {
      const values = model.weights.get(name)!.data;
      const gradient = gradients.get(name)!;
      expect(gradient.length).toBe(values.length);
      for (const index of [random.int(0, values.length - 1), random.int(0, values.length - 1)]) {
        const original = values[index]!;
        values[index] = original + 1e-4;
        const up = values[index]!;
        const plus = referenceLoss(model);
        values[index] = original - 1e-4;
        const down = values[index]!;
        const minus = referenceLoss(model);
        values[index] = original;
        const numeric = (plus - minus) / (up - down);
        expect(Math.abs(gradient[index]! - numeric), `${name}[${index}]: ${gradient[index]} vs ${numeric}`).toBeLessThan(1e-4 + 1e-3 * Math.abs(numeric));
      }
    }
    await trainer.release();
  });
});
