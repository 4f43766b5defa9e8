import { createAdamW } from '@agentflow/tensor';
import type { HeadParameters, HeadSessions } from './head-graph';
import type { TrainableScorer } from './training-loop';

/** Gathers rows of a [rows, hidden] matrix. */
export function pickRows(features: Float32Array, indices: readonly number[], hiddenSize: number): Float32Array {
  const out = new Float32Array(indices.length * hiddenSize);
  indices.forEach((index, row) => {
    out.set(features.subarray(index * hiddenSize, (index + 1) * hiddenSize), row * hiddenSize);
  });
  return out;
}

/** Sets the head to the constant predictor of `labelMean`: weight 0, bias = logit(mean). */
export function resetHead(parameters: HeadParameters, labelMean: number): void {
  const clamped = Math.min(Math.max(labelMean, 1e-4), 1 - 1e-4);
  parameters.weight.fill(0);
  parameters.bias[0] = Math.log(clamped / (1 - clamped));
}

/**
 * The head trained on frozen backbone features computed once: each step costs one tiny
 * ONNX Runtime call, so hundreds of epochs take seconds.
 */
export function createHeadTrainer(settings: {
  head: HeadSessions;
  parameters: HeadParameters;
  features: Float32Array; // [rows, hidden]
  labels: Float32Array; // [rows]
  learningRate: number;
  weightDecay: number;
}): TrainableScorer {
  const { head, parameters, features, labels } = settings;
  const optimizer = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.learningRate },
    weightDecay: settings.weightDecay,
    decays: (name) => name === 'weight',
  });
  return {
    reset: (labelMean) => resetHead(parameters, labelMean),
    async step(batch) {
      const { loss, gradients } = await head.lossAndGradients(
        pickRows(features, batch, head.hiddenSize),
        Float32Array.from(batch, (index) => labels[index]!),
        parameters,
      );
      optimizer.step({ weight: parameters.weight, bias: parameters.bias }, gradients);
      return loss;
    },
    predict: (indices) => head.score(pickRows(features, indices, head.hiddenSize), parameters),
    snapshot() {
      const weight = parameters.weight.slice();
      const bias = parameters.bias.slice();
      return () => {
        parameters.weight.set(weight);
        parameters.bias.set(bias);
      };
    },
  };
}
