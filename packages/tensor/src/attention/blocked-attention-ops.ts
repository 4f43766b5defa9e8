/**
 * Names and attributes shared by the blocked-attention composite (blocked-attention.ts), its
 * gradient rule and its lowering to ONNX `Loop`s. A composite is a node of the builder's own
 * domain: autodiff and recomputation see one node; serialisation replaces it by standard
 * operators (graph/lower-composites.ts).
 */

/** The builder's domain for composite nodes, which never reach ONNX Runtime. */
export const COMPOSITE_DOMAIN = 'ai.agentflow.composite';

/**
 * Forward: inputs [query, key, value, keyMask?], outputs [output, rowMax, rowLogSum]: each row's
 * largest score and log sum(exp(score - rowMax)), which the backward needs to recompute the
 * probabilities. Kept apart rather than as one log-sum-exp: a row whose keys are all masked has
 * scores near -1e9, where float32 cannot hold the log-sum-exp's log(total) (its spacing is 64).
 */
export const BLOCKED_ATTENTION = 'BlockedAttention';
/** Backward: inputs [query, key, value, keyMask?, output, rowMax, rowLogSum, outputGradient], outputs [dQuery, dKey, dValue]. */
export const BLOCKED_ATTENTION_GRADIENT = 'BlockedAttentionGrad';

/** The attributes both composites carry (ONNX attribute spelling). */
export interface BlockedAttentionAttributes {
  block_size: number;
  scale: { float: number };
  causal: number;
  masked_score: { float: number };
}
