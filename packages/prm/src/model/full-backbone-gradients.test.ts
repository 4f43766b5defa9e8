import { createRandom } from '@agentflow/core';
import { createGraphSession, createRandomModel, getModelPreset, type Qwen3Model, referenceForward } from '@agentflow/models';
import { createRuntime, type HostTensor } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { buildFeatureGraph, paddedFeeds } from './backbone-features';
import { buildBackboneTrainingGraph } from './backbone-training-graph';
import { HEAD_BIAS, HEAD_WEIGHT, LABELS, LOSS } from './head-graph';
import { meanPrmLoss, type PrmLoss } from './prm-loss';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const shape = { ...getModelPreset('tiny'), vocabSize: 32, hiddenSize: 16, intermediateSize: 24, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8 };
// Right-padded to the longest: the padding must change nothing.
const rows = [[1, 2, 3, 4], [5, 6], [7, 8, 9]];

/** The PRM's loss in float64: the reference forward pass's last hidden state, the sigmoid head, the loss's float64 definition. */
function referenceLoss(model: Qwen3Model, head: { weight: Float32Array; bias: number }, labels: Float32Array, loss: PrmLoss): number {
  const scores = rows.map((ids) => {
    const last = referenceForward(model.config, model.weights, ids).hidden[ids.length - 1]!;
    let logit = head.bias;
    last.forEach((value, k) => {
      logit += value * head.weight[k]!;
    });
    return 1 / (1 + Math.exp(-logit));
  });
  return meanPrmLoss(loss, scores, labels);
}

describe.each([
  { head: 'untied', tieWordEmbeddings: false, loss: 'mse' as const },
  { head: 'tied', tieWordEmbeddings: true, loss: 'bce' as const },
])('the PRM trained in full ($head LM head, $loss)', ({ tieWordEmbeddings, loss }) => {
  const model = createRandomModel({ ...shape, tieWordEmbeddings }, 5, { std: 0.3, normNoise: 0.1 });
  const random = createRandom(tieWordEmbeddings ? 2 : 3);
  const head = { weight: Float32Array.from({ length: shape.hiddenSize }, () => random.normal()), bias: 0.1 };
  const labels = Float32Array.from(rows, () => random.next());
  // Every weight the PRM reads: an untied LM head is not read (the PRM stops at the final norm).
  const names = buildFeatureGraph(model.config, model.weights).weightNames;
  const feeds: Record<string, HostTensor> = {
    ...paddedFeeds(rows),
    [HEAD_WEIGHT]: { dtype: 'float32', shape: [shape.hiddenSize, 1], data: head.weight },
    [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: Float32Array.of(head.bias) },
    [LABELS]: { dtype: 'float32', shape: [rows.length], data: labels },
  };
  const run = async (recompute: boolean) => {
    const built = buildBackboneTrainingGraph(model.config, model.weights, { kind: 'full', weights: names }, loss, 0, recompute);
    const session = await createGraphSession(runtime, built.graph, 'prm-full-gradients');
    const out = await session.run(feeds, [LOSS, ...built.trained.map((name) => `grad.${name}`)]);
    await session.release();
    return { trained: built.trained, loss: Number(out[LOSS]!.data[0]), gradient: (name: string) => out[`grad.${name}`]!.data as Float32Array };
  };

  it('the gradient of every backbone weight matches central finite differences of the float64 reference', async () => {
    expect(names.sort()).toEqual([...model.weights.keys()].filter((name) => tieWordEmbeddings || name !== 'lm_head.weight').sort());
    const { trained, loss: value, gradient } = await run(false);
    expect(trained).toEqual([...names, HEAD_WEIGHT, HEAD_BIAS]);
    expect(Math.abs(value - referenceLoss(model, head, labels, loss))).toBeLessThan(1e-5);
    let checked = 0;
    for (const name of names) {
      const values = model.weights.get(name)!.data;
      const analytic = gradient(name);
      expect(analytic.length).toBe(values.length);
      // Two random elements per tensor, and one in the embedding row of token 2 (most rows are no input's).
      const probes = [random.int(0, values.length - 1), random.int(0, values.length - 1)];
      if (name === 'model.embed_tokens.weight') probes.push(2 * shape.hiddenSize + random.int(0, shape.hiddenSize - 1));
      for (const index of probes) {
        const original = values[index]!;
        values[index] = original + 1e-4;
        const up = values[index]!; // the float32 values actually probed
        const plus = referenceLoss(model, head, labels, loss);
        values[index] = original - 1e-4;
        const down = values[index]!;
        const minus = referenceLoss(model, head, labels, loss);
        values[index] = original;
        const numeric = (plus - minus) / (up - down);
        expect(Math.abs(analytic[index]! - numeric), `${name}[${index}]: ${analytic[index]} vs ${numeric}`).toBeLessThan(1e-4 + 1e-3 * Math.abs(numeric));
        checked++;
      }
    }
    // 2 layers x 11 tensors, the final norm and the embedding (3 probes).
    expect(checked).toBe(2 * (2 * 11 + 2) + 1);
    // The gradients are not all (near) zero: the check compared something.
    expect(Math.max(...names.map((name) => Math.max(...gradient(name).map(Math.abs))))).toBeGreaterThan(1e-3);
  });

  it('recomputing layer activations in the backward gives the same weight gradients', async () => {
    const [kept, recomputed] = [await run(false), await run(true)];
    expect(recomputed.loss).toBeCloseTo(kept.loss, 6);
    for (const name of kept.trained) {
      const other = recomputed.gradient(name);
      kept.gradient(name).forEach((value, index) => {
        expect(Math.abs(other[index]! - value)).toBeLessThan(1e-6 + 1e-5 * Math.abs(value));
      });
    }
  });
});

describe('buildBackboneTrainingGraph (full)', () => {
  it('refuses a weight the PRM does not read, naming it', () => {
    const model = createRandomModel({ ...shape, tieWordEmbeddings: false }, 1);
    expect(() => buildBackboneTrainingGraph(model.config, model.weights, { kind: 'full', weights: ['lm_head.weight'] }, 'mse')).toThrow(
      /reads no weight "lm_head\.weight"/,
    );
  });
});
