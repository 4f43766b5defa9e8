import { AgentFlowError, type PolicyObjective } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import { type ClippedSurrogateSettings, assertClipRange } from '../math/clipped-surrogate';
import { KL_LOG_RATIO_BOUND, KL_TOKEN_BOUND } from '../math/reference-kl';

/** The settings of the objective, as for `clippedSurrogate`; klCoefficient > 0 needs reference log-probs. */
export type SurrogateGraphSettings = ClippedSurrogateSettings;

/** The per-token tensors of the objective, all with the same shape ([batch, completion]). */
export interface SurrogateTensors {
  newLogprobs: SymbolicTensor;
  oldLogprobs: SymbolicTensor;
  advantages: SymbolicTensor;
  /** Aggregation weights with masks folded in (see aggregationTokenWeights); 0 on padding. */
  tokenWeights: SymbolicTensor;
  /** Needed when klCoefficient > 0. */
  referenceLogprobs?: SymbolicTensor;
}

/** Scalars of the clipped-surrogate objective. */
export interface SurrogateGraphTerms {
  /** The objective of `clippedSurrogate` (its one statement, in src/math/clipped-surrogate.ts). */
  loss: SymbolicTensor;
  /** Counted tokens (weight > 0) whose ratio was clipped. */
  clippedTokens: SymbolicTensor;
  /** Counted tokens. */
  countedTokens: SymbolicTensor;
  /** Sum over counted tokens of k3(old, new), an estimate of KL(new || old). */
  approxKlSum: SymbolicTensor;
}

/** The objective appended with its own inputs (see addClippedSurrogate). */
export interface SurrogateGraph extends SurrogateGraphTerms {
  /** Names of the inputs to feed, each float32 with newLogprobs' shape. */
  inputNames: { oldLogprobs: string; advantages: string; tokenWeights: string; referenceLogprobs?: string };
}

/**
 * `clippedSurrogate` (src/math/clipped-surrogate.ts states the objective) as graph nodes over
 * given tensors; reverse-mode autodiff of the graph gives its gradient, and the tests compare
 * both with the typed-array form. Tokens with weight 0 (padding) are kept out of exp() so junk
 * log-probs there cannot produce NaN.
 */
export function clippedSurrogateTerms(g: GraphBuilder, tensors: SurrogateTensors, settings: SurrogateGraphSettings): SurrogateGraphTerms {
  assertClipRange(settings);
  const beta = settings.klCoefficient ?? 0;
  const { newLogprobs, oldLogprobs, advantages, tokenWeights } = tensors;
  const axes = newLogprobs.shape.map((_dimension, axis) => axis);
  const counted = g.greater(tokenWeights, 0); // bool [batch, seq]
  const logRatio = g.where(counted, g.sub(newLogprobs, oldLogprobs), 0); // [batch, seq]
  const ratio = g.exp(logRatio);
  const unclipped = g.mul(ratio, advantages);
  const clipped = g.mul(g.clip(ratio, 1 - settings.epsLow, 1 + settings.epsHigh), advantages);
  const term = g.min(unclipped, clipped); // [batch, seq]
  let loss = g.neg(g.reduceSum(g.mul(term, tokenWeights), axes)); // []
  if (beta !== 0) {
    if (tensors.referenceLogprobs === undefined) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `klCoefficient ${beta} needs a referenceLogprobs tensor.` });
    }
    // Bounded as in boundedK3: the log-ratio to +-KL_LOG_RATIO_BOUND, each token to KL_TOKEN_BOUND.
    const logReferenceOverNew = g.clip(
      g.where(counted, g.sub(tensors.referenceLogprobs, newLogprobs), 0),
      -KL_LOG_RATIO_BOUND,
      KL_LOG_RATIO_BOUND,
    );
    const k3 = g.clip(g.sub(g.sub(g.exp(logReferenceOverNew), logReferenceOverNew), 1), 0, KL_TOKEN_BOUND); // [batch, seq]
    loss = g.add(loss, g.mul(g.reduceSum(g.mul(k3, tokenWeights), axes), beta));
  }
  const countedFloat = g.cast(counted, 'float32');
  const negativeLogRatio = g.neg(logRatio);
  const approxKl = g.sub(g.sub(g.exp(negativeLogRatio), negativeLogRatio), 1);
  return {
    loss,
    clippedTokens: g.reduceSum(g.cast(g.and(g.less(clipped, unclipped), counted), 'float32'), axes),
    countedTokens: g.reduceSum(countedFloat, axes),
    approxKlSum: g.reduceSum(g.mul(approxKl, countedFloat), axes),
  };
}

/**
 * Appends the objective to a graph whose `newLogprobs` come from the model, declaring old
 * log-probs, advantages and token weights (and reference log-probs when the KL term is on)
 * as float32 inputs named `${prefix}old_logprobs` etc., so one session serves every micro-batch.
 */
export function addClippedSurrogate(
  g: GraphBuilder,
  newLogprobs: SymbolicTensor,
  settings: SurrogateGraphSettings & { prefix?: string },
): SurrogateGraph {
  assertClipRange(settings);
  const prefix = settings.prefix ?? 'dapo.';
  const shape = newLogprobs.shape;
  const oldLogprobs = g.input(`${prefix}old_logprobs`, 'float32', shape);
  const advantages = g.input(`${prefix}advantages`, 'float32', shape);
  const tokenWeights = g.input(`${prefix}token_weights`, 'float32', shape);
  const withKl = (settings.klCoefficient ?? 0) !== 0;
  const referenceLogprobs = withKl ? g.input(`${prefix}reference_logprobs`, 'float32', shape) : undefined;
  const terms = clippedSurrogateTerms(g, { newLogprobs, oldLogprobs, advantages, tokenWeights, referenceLogprobs }, settings);
  return {
    ...terms,
    inputNames: {
      oldLogprobs: oldLogprobs.name,
      advantages: advantages.name,
      tokenWeights: tokenWeights.name,
      ...(referenceLogprobs === undefined ? {} : { referenceLogprobs: referenceLogprobs.name }),
    },
  };
}

/** What a policy's training graph hands an objective (the shape @agentflow/models uses). */
export interface ObjectiveGraphTensors {
  /** log p of each completion token under the current policy, [batch, completion]. */
  logprobs: SymbolicTensor;
  /** The batch's token weights, 0 on padding. */
  tokenWeights: SymbolicTensor;
  /** Per-token entropy of the policy, [batch, completion]. */
  entropy(): SymbolicTensor;
  /** A float input fed from that per-token field of the PolicyTrainingBatch. */
  perToken(field: 'advantages' | 'oldLogprobs' | 'referenceLogprobs'): SymbolicTensor;
}

/** The `{ kind: 'clipped-surrogate' }` member of core's PolicyObjective: what a DAPO training batch names. */
export type ClippedSurrogatePolicyObjective = Extract<PolicyObjective, { kind: 'clipped-surrogate' }>;

/** The clipped surrogate as a graph-based policy takes an objective (the shape of @agentflow/models' PolicyObjectiveGraph). */
export interface ClippedSurrogateObjectiveGraph {
  readonly kind: 'clipped-surrogate';
  build(g: GraphBuilder, tensors: ObjectiveGraphTensors, objective: ClippedSurrogatePolicyObjective): ClippedSurrogateObjectiveOutputs;
}

/** The loss and the per-micro-batch metrics of {@link clippedSurrogateObjective}. */
export interface ClippedSurrogateObjectiveOutputs {
  loss: SymbolicTensor;
  metrics: { clipFraction: SymbolicTensor; approxKl: SymbolicTensor; entropy: SymbolicTensor };
}

/**
 * The objective of DAPO's training batches (`{ kind: 'clipped-surrogate' }`), handed as it is to
 * a graph-based policy (the local Qwen3 policy of @agentflow/models:
 * `createLocalPolicy({ objectives: [clippedSurrogateObjective] })`), which trains each batch
 * that names this kind with it. Reports clip fraction, approximate KL and entropy as means over
 * counted tokens of the micro-batch.
 */
export const clippedSurrogateObjective: ClippedSurrogateObjectiveGraph = {
  kind: 'clipped-surrogate',
  build: buildClippedSurrogateObjective,
};

function buildClippedSurrogateObjective(
  g: GraphBuilder,
  tensors: ObjectiveGraphTensors,
  objective: ClippedSurrogatePolicyObjective,
): ClippedSurrogateObjectiveOutputs {
  const terms = clippedSurrogateTerms(
    g,
    {
      newLogprobs: tensors.logprobs,
      oldLogprobs: tensors.perToken('oldLogprobs'),
      advantages: tensors.perToken('advantages'),
      tokenWeights: tensors.tokenWeights,
      referenceLogprobs: objective.klCoefficient !== 0 ? tensors.perToken('referenceLogprobs') : undefined,
    },
    objective,
  );
  const axes = tensors.logprobs.shape.map((_dimension, axis) => axis);
  const countedFloat = g.cast(g.greater(tensors.tokenWeights, 0), 'float32');
  const denominator = g.max(terms.countedTokens, 1);
  return {
    loss: terms.loss,
    metrics: {
      clipFraction: g.div(terms.clippedTokens, denominator),
      approxKl: g.div(terms.approxKlSum, denominator),
      entropy: g.div(g.reduceSum(g.mul(tensors.entropy(), countedFloat), axes), denominator),
    },
  };
}
