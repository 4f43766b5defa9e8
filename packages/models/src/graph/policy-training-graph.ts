import { AgentFlowError, assertNever, describeValue, type PolicyObjective, type PolicyTrainingBatch } from '@agentflow/core';
import { createGraphBuilder, type GraphBuilder, type SymbolicTensor } from '@agentflow/tensor';
import type { DecoderModel } from '../weights/random-model';
import { type AttentionSettings, buildDecoder, type LoraTensors, logprobsAt } from './decoder-graph';
import type { RowBlockSettings } from './row-blocked-layer';
import { declareLoraInputs, type LoraLayout, loraInputName } from './lora-inputs';

/** Per-token fields of a training batch that an objective may read, aligned with completionIds. */
export type PerTokenField = 'advantages' | 'oldLogprobs' | 'referenceLogprobs';

/** Scalar statistics an objective may report (see core's PolicyTrainingStats). */
export type ObjectiveMetric = 'clipFraction' | 'approxKl' | 'entropy';

/** What the training graph hands an objective; every per-token tensor is [batch, completion]. */
export interface ObjectiveTensors {
  /** log p(completion token) under the current policy. */
  logprobs: SymbolicTensor;
  /** 1 on real completion tokens, 0 on padding. */
  mask: SymbolicTensor;
  /** The batch's `tokenWeights` (0 on padding): loss = sum(weight * term) keeps micro-batches additive. */
  tokenWeights: SymbolicTensor;
  /** Entropy of the next-token distribution at each completion token (built on first use). */
  entropy(): SymbolicTensor;
  /** Declares a float input fed from that field of the training batch (an error when the batch lacks it). */
  perToken(field: PerTokenField): SymbolicTensor;
}

/** The objective's scalar loss and optional scalar metrics. */
export interface ObjectiveOutputs {
  loss: SymbolicTensor;
  metrics?: Partial<Record<ObjectiveMetric, SymbolicTensor>>;
}

/**
 * One training objective as a policy's training graph takes it: the core `PolicyObjective` kind
 * it builds (the kind each training batch names) and the builder of its loss. A policy is handed
 * the objectives themselves (`createLocalPolicy({ objectives: [clippedSurrogateObjective] })`,
 * the clipped surrogate from `@agentflow/dapo/graph`) and picks, for each batch, the one whose
 * kind the batch names: no name to register, no key for the caller to know.
 */
export interface PolicyObjectiveGraph {
  /** The kind of the objectives it builds. */
  readonly kind: PolicyObjective['kind'];
  /**
   * Appends the loss (and optional metrics) of `objective`, always of this `kind`, to `graph`
   * (an implementation may declare the parameter as that member of the union).
   */
  build(graph: GraphBuilder, tensors: ObjectiveTensors, objective: PolicyObjective): ObjectiveOutputs;
}

/** Weighted negative log-likelihood: loss = -sum(tokenWeights * logprobs). Built into every local policy. */
export const nllObjective: PolicyObjectiveGraph = {
  kind: 'nll',
  build: (graph, tensors) => ({
    loss: graph.neg(graph.reduceSum(graph.mul(graph.mul(tensors.tokenWeights, tensors.mask), tensors.logprobs), [0, 1])),
  }),
};

/** Graph names of the training graph's inputs and outputs. */
export const COMPLETION_POSITIONS = 'completion_positions';
export const COMPLETION_MASK = 'completion_mask';
export const TOKEN_WEIGHTS = 'token_weights';
export const LOSS = 'loss';
export const perTokenInputName = (field: PerTokenField) => `batch.${field}`;
export const gradientName = (input: string) => `grad.${input}`;
export const metricName = (metric: ObjectiveMetric) => `metric.${metric}`;

/** A built training graph and what its session is fed and fetched. */
export interface PolicyTrainingGraph {
  graph: GraphBuilder;
  /** Per-token batch fields the objective declared. */
  perTokenFields: PerTokenField[];
  /** Gradient output name by trained tensor: the LoRA input name, or the base weight's name. */
  gradients: Map<string, string>;
  metrics: ObjectiveMetric[];
}

/** What a training graph differentiates its loss with respect to. */
export type TrainedTensors =
  /** LoRA matrices, declared as inputs `lora.{path}.A` / `.B` and fed on every run (the base weights frozen). */
  | { kind: 'lora'; layout: LoraLayout }
  /**
   * Base weights, by Hugging Face name, as the decoder binds them (GraphBuilder.weight): no
   * extra input. A tied head reads the embedding's tensor, so `model.embed_tokens.weight` gets
   * one gradient, the sum of both uses.
   */
  | { kind: 'full'; weights: readonly string[] };

/** How the training graph trades memory for compute. */
export interface TrainingGraphSettings {
  /**
   * Recompute each layer's activations in the backward pass instead of keeping them from the
   * forward (gradient checkpointing): activation memory holds the residual stream at every
   * layer plus one layer's activations, for about one more forward pass. Same gradients.
   * Default false.
   */
  recompute?: boolean;
  /** How the decoder computes attention; default blocked (see defaultAttention in decoder-graph.ts). */
  attention?: AttentionSettings;
  /**
   * Each layer's norms, projections, RoPE and MLP over blocks of `blockSize` rows (DecoderSettings.rowBlocks):
   * with recomputation, the backward of a layer holds one block's activations instead of the
   * row's, so a long row's step grows less with its length, for one more pass over each layer's
   * row-wise parts. Same loss and gradients within float32 rounding. Default off (the graph
   * of short rows stays as it was).
   */
  rowBlocks?: RowBlockSettings;
}

/**
 * The training graph: the decoder (with LoRA inputs when LoRA trains), completion log-probs
 * gathered to [batch, completion], the objective's loss, and the gradients of the loss with
 * respect to every trained tensor (reverse mode, in the same graph): each LoRA matrix, or each
 * named base weight. Scoring inputs are those of the inference graph without a cache, plus
 * `completion_positions` (int64 [batch, completion]: where each completion token is predicted),
 * `completion_mask` and `token_weights`.
 */
export function buildPolicyTrainingGraph(
  model: DecoderModel,
  trained: TrainedTensors,
  objectiveGraph: PolicyObjectiveGraph,
  objective: PolicyObjective,
  settings: TrainingGraphSettings = {},
): PolicyTrainingGraph {
  if (objectiveGraph.kind !== objective.kind) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The objective graph builds ${JSON.stringify(objectiveGraph.kind)} objectives, not ${JSON.stringify(objective.kind)}; pass the graph of the batch's kind.`,
      details: { graphKind: objectiveGraph.kind, objectiveKind: objective.kind },
    });
  }
  const graph = createGraphBuilder({ name: 'qwen3-policy-training' });
  const loraTensors = trained.kind === 'lora' ? declareLoraInputs(graph, trained.layout) : undefined;
  const decoder = buildDecoder(graph, model.config, model.weights, {
    kvCache: false,
    ...(loraTensors ? { lora: loraTensors } : {}),
    ...(settings.attention ? { attention: settings.attention } : {}),
    ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}),
  });
  const targets = graph.input('target_ids', 'int64', ['batch', 'sequence']);
  const positions = graph.input(COMPLETION_POSITIONS, 'int64', ['batch', 'completion']);
  const mask = graph.input(COMPLETION_MASK, 'float32', ['batch', 'completion']);
  const tokenWeights = graph.input(TOKEN_WEIGHTS, 'float32', ['batch', 'completion']);
  // The head runs on the completion positions only: [batch, completion, vocab], never
  // [batch, sequence, vocab] (a prompt of thousands of tokens costs no vocabulary-wide tensor).
  const { logSoftmax, logprobs } = logprobsAt(graph, model.config, decoder, targets, positions); // [batch, completion, vocab], [batch, completion]
  let entropy: SymbolicTensor | undefined;
  const perTokenFields: PerTokenField[] = [];
  const declared = new Map<PerTokenField, SymbolicTensor>();
  const outputs = objectiveGraph.build(
    graph,
    {
      logprobs,
      mask,
      tokenWeights,
      entropy() {
        if (!entropy) {
          entropy = graph.neg(graph.reduceSum(graph.mul(graph.exp(logSoftmax), logSoftmax), [-1])); // [batch, completion]
        }
        return entropy;
      },
      perToken(field) {
        let tensor = declared.get(field);
        if (!tensor) {
          tensor = graph.input(perTokenInputName(field), 'float32', ['batch', 'completion']);
          declared.set(field, tensor);
          perTokenFields.push(field);
        }
        return tensor;
      },
    },
    objective,
  );
  graph.output(outputs.loss, LOSS);
  const wrt = trainedGraphTensors(trained, loraTensors, decoder.weights.bound());
  const gradientTensors = graph.gradients(
    outputs.loss,
    wrt.map(([, tensor]) => tensor),
    settings.recompute ? { recompute: decoder.boundaries } : {},
  );
  const gradients = new Map<string, string>();
  wrt.forEach(([name], index) => {
    graph.output(gradientTensors[index]!, gradientName(name));
    gradients.set(name, gradientName(name));
  });
  const metrics: ObjectiveMetric[] = [];
  for (const [metric, tensor] of Object.entries(outputs.metrics ?? {}) as [ObjectiveMetric, SymbolicTensor][]) {
    graph.output(tensor, metricName(metric));
    metrics.push(metric);
  }
  return { graph, perTokenFields, gradients, metrics };
}

/**
 * [gradient key, tensor] of every tensor a training graph differentiates: the LoRA inputs (by
 * input name) or the bound base weights (by weight name, in `trained`'s order). `graphName` words
 * the error for a weight the graph does not read. The policy's and the PRM's training graphs
 * both take their list from here.
 */
export function trainedGraphTensors(
  trained: TrainedTensors,
  loraTensors: ReadonlyMap<string, LoraTensors> | undefined,
  bound: ReadonlyMap<string, SymbolicTensor>,
  graphName = 'The training graph',
): (readonly [string, SymbolicTensor])[] {
  switch (trained.kind) {
    case 'lora':
      return [...(loraTensors ?? new Map<string, LoraTensors>()).entries()].flatMap(([path, tensors]) => [
        [loraInputName(path, 'A'), tensors.a] as const,
        [loraInputName(path, 'B'), tensors.b] as const,
      ]);
    case 'full':
      return trained.weights.map((name) => {
        const tensor = bound.get(name);
        if (!tensor) {
          throw new AgentFlowError({
            code: 'NOT_FOUND',
            message: `${graphName} reads no weight ${describeValue(name)}; the weights it reads are ${describeValue([...bound.keys()], 400)}.`,
            details: { name },
          });
        }
        return [name, tensor] as const;
      });
    default:
      return assertNever(trained);
  }
}

/** The batch's per-token rows of `field`, or undefined. */
export function perTokenRows(batch: PolicyTrainingBatch, field: PerTokenField): number[][] | undefined {
  return batch[field];
}
