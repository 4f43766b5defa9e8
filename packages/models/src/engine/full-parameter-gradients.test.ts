import { createRandom, type PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { nllObjective } from '../graph/policy-training-graph';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { createRandomModel, type Qwen3Model } from '../weights/random-model';
import { createPolicyTrainer } from './training-step';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

const shape = { ...getModelPreset('tiny'), vocabSize: 32, hiddenSize: 16, intermediateSize: 24, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8 };

const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3], [4]],
  completionIds: [[5, 6], [7, 8, 9, 10]],
  tokenWeights: [[1 / 6, 1 / 6], [1 / 6, 1 / 6, 1 / 6, 1 / 6]],
  objective: { kind: 'nll' },
};

/** The batch's nll loss under `model`, by the float64 reference forward pass. */
function referenceLoss(model: Qwen3Model): number {
  let total = 0;
  batch.promptIds.forEach((prompt, row) => {
    referenceCompletionLogprobs(model.config, model.weights, prompt, batch.completionIds[row]!).forEach((value, index) => {
      total -= batch.tokenWeights[row]![index]! * value;
    });
  });
  return total;
}

describe.each([
  { head: 'untied', tieWordEmbeddings: false },
  { head: 'tied', tieWordEmbeddings: true },
])('full-parameter gradients ($head head)', ({ tieWordEmbeddings }) => {
  const model = createRandomModel({ ...shape, tieWordEmbeddings }, 5, { std: 0.3, normNoise: 0.1 });
  const names = [...model.weights.keys()];

  it('the nll gradient of every base weight matches central finite differences of the reference', async () => {
    const trainer = createPolicyTrainer({ model, weights: names, runtime, objectives: [nllObjective] });
    const { stats, gradients } = await trainer.run(batch);
    expect(Math.abs(stats.loss - referenceLoss(model))).toBeLessThan(1e-4);
    expect([...gradients.keys()]).toEqual(names);
    expect(gradients.has('lm_head.weight')).toBe(!tieWordEmbeddings);
    const random = createRandom(1);
    let checked = 0;
    for (const name of names) {
      const values = model.weights.get(name)!.data;
      const gradient = gradients.get(name)!;
      expect(gradient.length).toBe(values.length);
      // Two random elements per tensor; for the embedding also one in the row of a prompt token
      // (untied, most rows have no gradient; tied, that row is read by the lookup and the head).
      const probes = [random.int(0, values.length - 1), random.int(0, values.length - 1)];
      if (name === 'model.embed_tokens.weight') probes.push(2 * shape.hiddenSize + random.int(0, shape.hiddenSize - 1));
      for (const index of probes) {
        const original = values[index]!;
        const epsilon = 1e-4;
        values[index] = original + epsilon;
        const up = values[index]!; // the float32 values actually probed
        const plus = referenceLoss(model);
        values[index] = original - epsilon;
        const down = values[index]!;
        const minus = referenceLoss(model);
        values[index] = original;
        const numeric = (plus - minus) / (up - down);
        expect(Math.abs(gradient[index]! - numeric), `${name}[${index}]: ${gradient[index]} vs ${numeric}`).toBeLessThan(1e-4 + 1e-3 * Math.abs(numeric));
        checked++;
      }
    }
    // 2 layers x 11 tensors, the final norm, the embedding (3 probes) and, untied, the head.
    expect(checked).toBe(2 * (2 * 11 + 2 + (tieWordEmbeddings ? 0 : 1)) + 1);
    // The probed embedding row carries a gradient: the lookup (and, tied, the head) reached it.
    const embedding = gradients.get('model.embed_tokens.weight')!;
    expect(embedding.subarray(2 * shape.hiddenSize, 3 * shape.hiddenSize).some((value) => value !== 0)).toBe(true);
    await trainer.release();
  });

  it('recomputing layer activations in the backward gives the same loss and weight gradients', async () => {
    const kept = createPolicyTrainer({ model, weights: names, runtime, objectives: [nllObjective] });
    const recomputed = createPolicyTrainer({ model, weights: names, runtime, objectives: [nllObjective], recompute: true });
    const [a, b] = [await kept.run(batch), await recomputed.run(batch)];
    expect(b.stats.loss).toBeCloseTo(a.stats.loss, 6);
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

describe('createPolicyTrainer (full-parameter)', () => {
  const model = createRandomModel({ ...shape, tieWordEmbeddings: false }, 2);

  it('returns gradients of the named weights only, and refuses an adapter or a weight it does not read', async () => {
    const trainer = createPolicyTrainer({ model, weights: ['model.norm.weight', 'lm_head.weight'], runtime, objectives: [nllObjective] });
    expect([...(await trainer.run(batch)).gradients.keys()]).toEqual(['model.norm.weight', 'lm_head.weight']);
    const adapter = createLoraAdapter(model.config, parseLoraSettings({ rank: 2, alpha: 2 }));
    await expect(trainer.run(batch, adapter)).rejects.toThrow(/feeds no LoRA adapter/);
    await trainer.release();
    const unknown = createPolicyTrainer({ model, weights: ['model.layers.9.mlp.up_proj.weight'], runtime, objectives: [nllObjective] });
    await expect(unknown.run(batch)).rejects.toThrow(/reads no weight "model\.layers\.9\.mlp\.up_proj\.weight"/);
    await unknown.release();
  });
});
