import {
  buildDecoder,
  declareLoraInputs,
  type LoraLayout,
  loraInputName,
  type ModelWeights,
  type Qwen3Config,
} from '@agentflow/models';
import { createGraphBuilder, type GraphBuilder, type SymbolicTensor } from '@agentflow/tensor';
import { CONFIDENCE, LAST_TOKEN } from './backbone-features';
import { HEAD_BIAS, HEAD_WEIGHT, LABELS, LOSS } from './head-graph';
import { type PrmLoss, prmLossGraph } from './prm-loss';

/** The names of the trainable graph inputs: every LoRA matrix, then the head. */
export function loraTrainableNames(layout: LoraLayout): string[] {
  return [
    ...layout.modules.flatMap(({ path }) => [loraInputName(path, 'A'), loraInputName(path, 'B')]),
    HEAD_WEIGHT,
    HEAD_BIAS,
  ];
}

/**
 * Backbone with LoRA, last-token selection, the sigmoid head and the loss in one graph
 * (with `extraFeatures`, a `confidence` input [batch, extraFeatures] the head also reads),
 * with the gradients of the loss with respect to every LoRA matrix and the head
 * (outputs `grad.<input name>`). The base weights are frozen initializers. With `recompute`,
 * the backward pass recomputes each layer's activations from the layer boundaries.
 */
export function buildLoraTrainingGraph(
  config: Qwen3Config,
  weights: ModelWeights,
  layout: LoraLayout,
  loss: PrmLoss,
  extraFeatures = 0,
  recompute = false,
): GraphBuilder {
  const graph = createGraphBuilder({ name: `prm-lora-train-${loss}` });
  const lora = declareLoraInputs(graph, layout);
  const decoder = buildDecoder(graph, config, weights, { kvCache: false, lora });
  const lastToken = graph.input(LAST_TOKEN, 'float32', ['batch', 'sequence']); // [batch, sequence]
  const hidden = graph.reduceSum(graph.mul(decoder.hidden, graph.unsqueeze(lastToken, [2])), [1]); // [batch, hidden]
  // With extra features (confidence), the head reads [hidden, extra] side by side.
  const features =
    extraFeatures > 0 ? graph.concat([hidden, graph.input(CONFIDENCE, 'float32', ['batch', extraFeatures])], 1) : hidden;
  const weight = graph.input(HEAD_WEIGHT, 'float32', [config.hiddenSize + extraFeatures, 1]);
  const bias = graph.input(HEAD_BIAS, 'float32', [1]);
  const scores = graph.sigmoid(graph.squeeze(graph.add(graph.matmul(features, weight), bias), [1])); // [batch]
  const labels = graph.input(LABELS, 'float32', ['batch']); // [batch]
  const mean = prmLossGraph(graph, scores, labels, loss); // []
  graph.output(mean, LOSS);
  const trainable: SymbolicTensor[] = [];
  for (const { path } of layout.modules) {
    const tensors = lora.get(path)!;
    trainable.push(tensors.a, tensors.b);
  }
  trainable.push(weight, bias);
  graph.gradients(mean, trainable, recompute ? { recompute: decoder.boundaries } : {}).forEach((gradient, index) => {
    graph.output(gradient, `grad.${trainable[index]!.name}`);
  });
  return graph;
}
