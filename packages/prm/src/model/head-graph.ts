import { AgentFlowError } from '@agentflow/core';
import { createGraphBuilder, type HostTensor, type TensorSession, type TensorRuntime } from '@agentflow/tensor';
import { type PrmLoss, prmLossGraph } from './prm-loss';

/** Graph names of the head graphs. */
export const FEATURES = 'features';
export const HEAD_WEIGHT = 'head.weight';
export const HEAD_BIAS = 'head.bias';
export const LABELS = 'labels';
export const SCORES = 'scores';
export const LOSS = 'loss';

/**
 * The regression head: score = sigmoid(features . weight + bias), one score per row.
 * With `loss`, the graph also takes `labels` [batch] and returns the mean loss and its
 * gradients with respect to the weight and the bias (`grad.head.weight`, `grad.head.bias`).
 */
export function buildHeadGraph(hiddenSize: number, loss?: PrmLoss): Uint8Array {
  const graph = createGraphBuilder({ name: loss ? `prm-head-train-${loss}` : 'prm-head' });
  const features = graph.input(FEATURES, 'float32', ['batch', hiddenSize]); // [batch, hidden]
  const weight = graph.input(HEAD_WEIGHT, 'float32', [hiddenSize, 1]); // [hidden, 1]
  const bias = graph.input(HEAD_BIAS, 'float32', [1]); // [1]
  const logits = graph.squeeze(graph.add(graph.matmul(features, weight), bias), [1]); // [batch]
  const scores = graph.sigmoid(logits); // [batch]
  graph.output(scores, SCORES);
  if (loss) {
    const labels = graph.input(LABELS, 'float32', ['batch']); // [batch]
    const mean = prmLossGraph(graph, scores, labels, loss); // []
    graph.output(mean, LOSS);
    const [weightGradient, biasGradient] = graph.gradients(mean, [weight, bias]);
    graph.output(weightGradient!, `grad.${HEAD_WEIGHT}`);
    graph.output(biasGradient!, `grad.${HEAD_BIAS}`);
  }
  return graph.toBytes();
}

/** The head's parameters, updated in place by the optimiser. */
export interface HeadParameters {
  weight: Float32Array; // [hidden]
  bias: Float32Array; // [1]
}

/** Sessions of the head: scoring, and training with one loss. */
export interface HeadSessions {
  hiddenSize: number;
  score(features: Float32Array, parameters: HeadParameters): Promise<Float32Array>;
  lossAndGradients(
    features: Float32Array,
    labels: Float32Array,
    parameters: HeadParameters,
  ): Promise<{ loss: number; gradients: Record<string, Float32Array> }>;
  release(): Promise<void>;
}

/** Creates the head's ONNX Runtime sessions (the training one only when a loss is given). */
export async function createHeadSessions(runtime: TensorRuntime, hiddenSize: number, loss?: PrmLoss): Promise<HeadSessions> {
  const scoring = await runtime.createSession(buildHeadGraph(hiddenSize), { name: 'prm-head' });
  const training: TensorSession | undefined = loss
    ? await runtime.createSession(buildHeadGraph(hiddenSize, loss), { name: `prm-head-train-${loss}` })
    : undefined;
  const feeds = (features: Float32Array, parameters: HeadParameters): Record<string, HostTensor> => {
    if (features.length % hiddenSize !== 0) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `PRM features of length ${features.length} are not rows of the hidden size ${hiddenSize}.`,
      });
    }
    return {
      [FEATURES]: { dtype: 'float32', shape: [features.length / hiddenSize, hiddenSize], data: features },
      [HEAD_WEIGHT]: { dtype: 'float32', shape: [hiddenSize, 1], data: parameters.weight },
      [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: parameters.bias },
    };
  };
  return {
    hiddenSize,
    async score(features, parameters) {
      if (features.length === 0) return new Float32Array(0);
      const out = await scoring.run(feeds(features, parameters), [SCORES]);
      return out[SCORES]!.data as Float32Array;
    },
    async lossAndGradients(features, labels, parameters) {
      if (!training) {
        throw new AgentFlowError({ code: 'INTERNAL', message: 'The PRM head was created without a training session.' });
      }
      const out = await training.run(
        { ...feeds(features, parameters), [LABELS]: { dtype: 'float32', shape: [labels.length], data: labels } },
        [LOSS, `grad.${HEAD_WEIGHT}`, `grad.${HEAD_BIAS}`],
      );
      return {
        loss: Number(out[LOSS]!.data[0]),
        gradients: {
          weight: out[`grad.${HEAD_WEIGHT}`]!.data as Float32Array,
          bias: out[`grad.${HEAD_BIAS}`]!.data as Float32Array,
        },
      };
    },
    async release() {
      await scoring.release();
      await training?.release();
    },
  };
}
