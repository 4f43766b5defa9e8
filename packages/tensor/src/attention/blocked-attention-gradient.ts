import type { GradientRule } from '../autodiff/gradient-helpers';
import type { AttributeValue } from '../graph/graph-types';
import { BLOCKED_ATTENTION, BLOCKED_ATTENTION_GRADIENT, COMPOSITE_DOMAIN } from './blocked-attention-ops';

/**
 * The gradient of the blocked-attention composite: one backward composite (lowered to a Loop
 * that recomputes each block's probabilities from the rows' saved softmax statistics) giving the
 * query, key and value gradients at once. The key mask gets none. Only the output's gradient
 * flows: the statistics are the forward's record for this rule, not results callers read.
 */
const blockedAttentionGradient: GradientRule = ({ g, node, outputGradients }) => {
  const [query, key, value, keyMask] = node.inputs;
  const [output, rowMax, rowLogSum] = node.outputs;
  const outputGradient = outputGradients[0];
  if (outputGradient === undefined) return [undefined, undefined, undefined, undefined];
  const gradients = g.op(BLOCKED_ATTENTION_GRADIENT, [query, key, value, keyMask, output, rowMax, rowLogSum, outputGradient], {
    domain: COMPOSITE_DOMAIN,
    attributes: node.attributes as Record<string, AttributeValue>,
    outputs: [query!, key!, value!].map((tensor) => ({ dtype: tensor.dtype, shape: tensor.shape })),
  });
  return [gradients[0], gradients[1], gradients[2], undefined];
};

/** Gradient rules of the composites, keyed as gradients.ts looks them up (domain.opType). */
export const compositeGradientRules: Record<string, GradientRule> = {
  [`${COMPOSITE_DOMAIN}.${BLOCKED_ATTENTION}`]: blockedAttentionGradient,
};
