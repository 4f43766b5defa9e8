import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { loraInputName, loraLayoutOf } from '../graph/lora-inputs';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { mergeLoraAdapter } from '../lora/peft-format';
import { referenceForward } from '../reference/reference-forward';
import { createRandomModel } from '../weights/random-model';
import type { ModelWeights } from '../weights/weight-names';
import { createScalarHead, createScalarHeadModel } from './scalar-head';

const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const config = { ...getModelPreset('tiny'), vocabSize: 30, hiddenSize: 16, intermediateSize: 24, headDim: 8 };
const model = createRandomModel(config, 8, { std: 0.3 });
const loraConfig = parseLoraSettings({ rank: 2, alpha: 4, targetModules: ['o_proj'] });
const batch = { inputIds: [[1, 2, 3, 4], [5, 6]], positions: [[1, 3], [1]], targets: [[0.2, 0.9], [0.5]], weights: [[0.25, 0.25], [0.5]] };

function referenceLoss(weights: ModelWeights, head: { weight: Float32Array; bias: Float32Array }): number {
  let loss = 0;
  batch.inputIds.forEach((ids, row) => {
    const { hidden } = referenceForward(config, weights, ids);
    batch.positions[row]!.forEach((position, k) => {
      const score = hidden[position]!.reduce((sum, value, index) => sum + value * head.weight[index]!, head.bias[0]!);
      loss += batch.weights[row]![k]! * (score - batch.targets[row]![k]!) ** 2;
    });
  });
  return loss;
}

describe('scalar head', () => {
  it('scores hidden states and returns head and LoRA gradients that match finite differences', async () => {
    const headModel = createScalarHeadModel({ model, runtime, lora: loraLayoutOf(config, loraConfig) });
    const head = createScalarHead(config, 1);
    head.weight.forEach((_, index) => {
      head.weight[index] = 0.5 * Math.sin(index + 1);
    });
    head.bias[0] = 0.1;
    const adapter = createLoraAdapter(config, loraConfig, 2);
    const random = createRandom(3);
    for (const m of adapter.matrices.values()) m.b.forEach((_, index) => { m.b[index] = 0.2 * random.normal(); });
    const merged = () => mergeLoraAdapter(model.weights, adapter);
    const scores = await headModel.score(batch, head, adapter);
    const { hidden } = referenceForward(config, merged(), batch.inputIds[0]!);
    const expected = hidden[3]!.reduce((sum, value, index) => sum + value * head.weight[index]!, 0.1);
    expect(Math.abs(scores[0]![1]! - expected)).toBeLessThan(1e-4);
    expect(scores[1]).toHaveLength(1);

    const result = await headModel.gradients(batch, head, adapter);
    expect(Math.abs(result.loss - referenceLoss(merged(), head))).toBeLessThan(1e-4);
    const epsilon = 1e-4;
    const probe = (values: Float32Array, index: number) => {
      const original = values[index]!;
      values[index] = original + epsilon;
      const plus = referenceLoss(merged(), head);
      values[index] = original - epsilon;
      const minus = referenceLoss(merged(), head);
      values[index] = original;
      return (plus - minus) / (2 * epsilon);
    };
    expect(Math.abs(result.head.weight[5]! - probe(head.weight, 5))).toBeLessThan(1e-3);
    expect(Math.abs(result.head.bias[0]! - probe(head.bias, 0))).toBeLessThan(1e-3);
    const path = 'model.layers.1.self_attn.o_proj';
    const a = adapter.matrices.get(path)!.a;
    expect(Math.abs(result.lora.get(loraInputName(path, 'A'))![7]! - probe(a, 7))).toBeLessThan(1e-3);
    await headModel.release();
  });
});
