import { createAdamW } from '@agentflow/tensor';
import { type HeadParameters, type HeadSessions, headArrays, headDecays, inputStatistics, resetHead } from './head-graph';
import type { TrainableScorer } from './training-loop';

/** Gathers rows of a [rows, hidden] matrix. */
export function pickRows(features: Float32Array, indices: readonly number[], hiddenSize: number): Float32Array {
  const out = new Float32Array(indices.length * hiddenSize);
  indices.forEach((index, row) => {
    out.set(features.subarray(index * hiddenSize, (index + 1) * hiddenSize), row * hiddenSize);
  });
  return out;
}

/**
 * The head trained on frozen backbone features computed once: each step costs one tiny
 * ONNX Runtime call, so hundreds of epochs take seconds.
 */
export function createHeadTrainer(settings: {
  head: HeadSessions;
  parameters: HeadParameters;
  features: Float32Array; // [rows, head inputs]
  labels: Float32Array; // [rows]
  learningRate: number;
  weightDecay: number;
}): TrainableScorer {
  const { head, parameters, features, labels } = settings;
  const optimizer = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.learningRate },
    weightDecay: settings.weightDecay,
    decays: headDecays,
  });
  const width = head.layout.inputs;
  return {
    reset: (labelMean, random, train) =>
      resetHead(parameters, labelMean, random, head.layout.hidden > 0 ? inputStatistics(features, width, train) : undefined),
    async step(batch) {
      const { loss, gradients } = await head.lossAndGradients(
        pickRows(features, batch, width),
        Float32Array.from(batch, (index) => labels[index]!),
        parameters,
      );
      optimizer.step(headArrays(parameters), gradients);
      return loss;
    },
    predict: (indices) => head.score(pickRows(features, indices, width), parameters),
    snapshot: () => snapshotArrays(headArrays(parameters)),
  };
}

/** Copies of `arrays`; calling the result writes them back in place. */
export function snapshotArrays(arrays: Record<string, Float32Array>): () => void {
  const saved = Object.entries(arrays).map(([name, values]) => [name, values.slice()] as const);
  return () => {
    for (const [name, values] of saved) arrays[name]!.set(values);
  };
}
