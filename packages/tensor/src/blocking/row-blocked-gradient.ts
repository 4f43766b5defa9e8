import { zerosLike } from '../autodiff/gradient-helpers';
import type { GradientRule } from '../autodiff/gradient-helpers';
import { COMPOSITE_DOMAIN } from '../attention/blocked-attention-ops';
import { isFloatDtype } from '../dtype/dtype';
import type { AttributeValue } from '../graph/graph-types';
import { ROW_BLOCKED, ROW_BLOCKED_GRADIENT, type RowBlockedMeta } from './row-blocked-ops';

/**
 * The gradient of a row-blocked function: one backward composite (lowered to a Loop that
 * recomputes each block's function and differentiates it there) giving the gradients of the
 * needed rows (per block) and parameters (summed over the blocks). A missing output gradient
 * counts as zeros.
 */
const rowBlockedGradient: GradientRule = ({ g, node, outputGradients, needs }) => {
  const wanted = node.inputs.map((x, index) => x !== undefined && needs[index] === true && isFloatDtype(x.dtype));
  if (!wanted.some(Boolean) || outputGradients.every((gradient) => gradient === undefined)) return node.inputs.map(() => undefined);
  const seeds = node.outputs.map((y, index) => outputGradients[index] ?? zerosLike(g, y));
  const meta: RowBlockedMeta = { rowFunction: (node.meta as unknown as RowBlockedMeta).rowFunction, needs: wanted };
  const inputs = node.inputs.filter((_, index) => wanted[index]);
  const gradients = g.op(ROW_BLOCKED_GRADIENT, [...node.inputs, ...seeds], {
    domain: COMPOSITE_DOMAIN,
    attributes: node.attributes as Record<string, AttributeValue>,
    meta: { ...meta },
    outputs: inputs.map((x) => ({ dtype: x!.dtype, shape: x!.shape })),
  });
  let next = 0;
  return wanted.map((isWanted) => (isWanted ? gradients[next++] : undefined));
};

/** Gradient rules of the row-blocked composite, keyed as gradients.ts looks them up (domain.opType). */
export const rowBlockedGradientRules: Record<string, GradientRule> = {
  [`${COMPOSITE_DOMAIN}.${ROW_BLOCKED}`]: rowBlockedGradient,
};
