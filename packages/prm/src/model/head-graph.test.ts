import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { createHeadSessions, type HeadParameters } from './head-graph';
import { meanPrmLoss, type PrmLoss } from './prm-loss';

const hidden = 5;
const rows = 7;

function fixture(seed: number) {
  const random = createRandom(seed);
  const features = Float32Array.from({ length: rows * hidden }, () => random.normal());
  const labels = Float32Array.from({ length: rows }, () => random.next());
  const parameters: HeadParameters = {
    weight: Float32Array.from({ length: hidden }, () => 0.5 * random.normal()),
    bias: Float32Array.of(0.1),
  };
  return { features, labels, parameters };
}

/** The loss in float64: the head's sigmoid computed here, the loss by its float64 definition. */
function referenceLoss(loss: PrmLoss, features: Float32Array, labels: Float32Array, parameters: HeadParameters): number {
  const scores = Array.from({ length: rows }, (_, row) => {
    let logit = parameters.bias[0]!;
    for (let k = 0; k < hidden; k++) logit += features[row * hidden + k]! * parameters.weight[k]!;
    return 1 / (1 + Math.exp(-logit));
  });
  return meanPrmLoss(loss, scores, labels);
}

describe('the regression head on ONNX Runtime', () => {
  for (const loss of ['mse', 'bce'] as const) {
    it(`${loss}: loss matches a float64 reference and gradients match finite differences`, async () => {
      const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
      const head = await createHeadSessions(runtime, hidden, loss);
      const { features, labels, parameters } = fixture(loss === 'mse' ? 1 : 2);
      const { loss: value, gradients } = await head.lossAndGradients(features, labels, parameters);
      expect(value).toBeCloseTo(referenceLoss(loss, features, labels, parameters), 5);
      const h = 1e-3;
      for (const [name, values] of [
        ['weight', parameters.weight],
        ['bias', parameters.bias],
      ] as const) {
        for (let k = 0; k < values.length; k++) {
          const original = values[k]!;
          values[k] = original + h;
          const up = referenceLoss(loss, features, labels, parameters);
          values[k] = original - h;
          const down = referenceLoss(loss, features, labels, parameters);
          values[k] = original;
          expect(gradients[name]![k]).toBeCloseTo((up - down) / (2 * h), 4);
        }
      }
      const scores = await head.score(features, parameters);
      expect(scores).toHaveLength(rows);
      expect(Array.from(scores).every((score) => score > 0 && score < 1)).toBe(true);
      await head.release();
    });
  }
});
