import {
  buildDecoder,
  declareLoraInputs,
  type ModelWeights,
  type Qwen3Config,
  type TrainedTensors,
  trainedGraphTensors,
} from '@agentflow/models';
import { createGraphBuilder, type GraphBuilder, type SymbolicTensor } from '@agentflow/tensor';
import { CONFIDENCE, LAST_TOKEN } from './backbone-features';
import { declareHead, type HeadLayout, LABELS, LOSS } from './head-graph';
import { type PrmLoss, prmLossGraph } from './prm-loss';

/** A built PRM training graph and the names of what it differentiates (each output as `grad.<name>`). */
export interface BackboneTrainingGraph {
  graph: GraphBuilder;
  /** The backbone's trained tensors (LoRA input names, or Hugging Face weight names), then the head's parameters. */
  trained: string[];
}

/**
 * The backbone, last-token selection, the head (`declareHead`: linear, or a ReLU layer first when
 * `headHidden` > 0) and the loss in one graph (with `extraFeatures`, a `confidence` input
 * [batch, extraFeatures] the head also reads), with the
 * gradients of the loss with respect to the head and to what trains in the backbone (outputs
 * `grad.<name>`): with LoRA, every LoRA matrix (declared as inputs, the base weights frozen
 * initializers); in full, the named base weights as the decoder binds them (models'
 * `WeightInitializers.bound()`, the mechanism of the policy's training graph), so a tied
 * embedding gets one gradient. With `recompute`, the backward pass recomputes each layer's
 * activations from the layer boundaries.
 */
export function buildBackboneTrainingGraph(
  config: Qwen3Config,
  weights: ModelWeights,
  trained: TrainedTensors,
  loss: PrmLoss,
  extraFeatures = 0,
  recompute = false,
  headHidden = 0,
): BackboneTrainingGraph {
  const graph = createGraphBuilder({ name: `prm-${trained.kind}-train-${loss}` });
  const lora = trained.kind === 'lora' ? declareLoraInputs(graph, trained.layout) : undefined;
  const decoder = buildDecoder(graph, config, weights, { kvCache: false, ...(lora ? { lora } : {}) });
  const lastToken = graph.input(LAST_TOKEN, 'float32', ['batch', 'sequence']); // [batch, sequence]
  const hidden = graph.reduceSum(graph.mul(decoder.hidden, graph.unsqueeze(lastToken, [2])), [1]); // [batch, hidden]
  // With extra features (confidence), the head reads [hidden, extra] side by side.
  const features =
    extraFeatures > 0 ? graph.concat([hidden, graph.input(CONFIDENCE, 'float32', ['batch', extraFeatures])], 1) : hidden;
  const layout: HeadLayout = { inputs: config.hiddenSize + extraFeatures, hidden: headHidden };
  const head = declareHead(graph, features, layout);
  const scores = head.scores; // [batch]
  const labels = graph.input(LABELS, 'float32', ['batch']); // [batch]
  const mean = prmLossGraph(graph, scores, labels, loss); // []
  graph.output(mean, LOSS);
  const wrt: (readonly [string, SymbolicTensor])[] = [
    ...trainedGraphTensors(trained, lora, decoder.weights.bound(), "The PRM's training graph"),
    ...head.parameters,
  ];
  graph
    .gradients(
      mean,
      wrt.map(([, tensor]) => tensor),
      recompute ? { recompute: decoder.boundaries } : {},
    )
    .forEach((gradient, index) => {
      graph.output(gradient, `grad.${wrt[index]![0]}`);
    });
  return { graph, trained: wrt.map(([name]) => name) };
}

