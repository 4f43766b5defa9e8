import type { GraphNode } from '../graph/graph-state';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';

/** What a gradient rule sees: the forward node, the gradients of its outputs, which inputs need one. */
export interface GradientContext {
  g: GraphBuilder;
  node: GraphNode;
  /** Upstream gradient of each output (undefined: that output does not reach the loss). */
  outputGradients: (SymbolicTensor | undefined)[];
  /** needs[i]: input i lies on a path from a differentiated tensor. */
  needs: boolean[];
}

/** Returns one gradient per input (undefined where not needed or not differentiable). */
export type GradientRule = (context: GradientContext) => (SymbolicTensor | undefined)[];

/** Reshape `x` to the runtime shape of `like`, keeping `like`'s symbolic shape. */
export function reshapeLike(g: GraphBuilder, x: SymbolicTensor, like: SymbolicTensor): SymbolicTensor {
  if (sameShape(x.shape, like.shape) && x.shape.every((dim) => typeof dim === 'number' || !dim.startsWith('?'))) return x;
  return g.op('Reshape', [x, g.shape(like)], { outputs: [{ dtype: x.dtype, shape: like.shape }] })[0]!;
}

/** Broadcast `x` to the runtime shape of `like`. */
export function expandLike(g: GraphBuilder, x: SymbolicTensor, like: SymbolicTensor): SymbolicTensor {
  return g.op('Expand', [x, g.shape(like)], { outputs: [{ dtype: x.dtype, shape: like.shape }] })[0]!;
}

/** Zeros with the runtime shape of `like`. */
export function zerosLike(g: GraphBuilder, like: SymbolicTensor): SymbolicTensor {
  return g.constantOfShape(g.shape(like), 0, like.dtype);
}

function sameShape(a: readonly (number | string)[], b: readonly (number | string)[]): boolean {
  return a.length === b.length && a.every((dim, index) => dim === b[index]);
}

/**
 * Sums a gradient over the dimensions along which `target` was broadcast, so the result has
 * `target`'s shape. Known dimensions are decided statically; a symbolic target dimension
 * that may have been 1 is reduced at run time (ReduceSum over the axes where Shape(target)
 * is 1, which is a no-op on axes that were not broadcast).
 */
export function reduceToShape(g: GraphBuilder, gradient: SymbolicTensor, target: SymbolicTensor): SymbolicTensor {
  let result = gradient;
  const extra = result.shape.length - target.shape.length;
  if (extra > 0) result = g.reduceSum(result, [...Array(extra).keys()], false);
  const staticAxes: number[] = [];
  let dynamic = false;
  target.shape.forEach((dim, axis) => {
    const current = result.shape[axis]!;
    if (dim === current) return;
    if (dim === 1) staticAxes.push(axis);
    else if (typeof dim === 'string') dynamic = true;
  });
  if (staticAxes.length > 0) result = g.reduceSum(result, staticAxes, true);
  if (dynamic) {
    const ones = g.equal(g.shape(target), 1);
    const axes = g.reshape(g.op('NonZero', [ones], { outputs: [{ dtype: 'int64', shape: [1, '?axes'] }] })[0]!, [-1]);
    result = g.op('ReduceSum', [result, axes], {
      attributes: { keepdims: 1, noop_with_empty_axes: 1 },
      outputs: [{ dtype: result.dtype, shape: target.shape }],
    })[0]!;
  }
  return reshapeLike(g, result, target);
}

/** Adds gradient contributions (fan-out accumulation). */
export function sumAll(g: GraphBuilder, parts: readonly SymbolicTensor[]): SymbolicTensor {
  let total = parts[0]!;
  for (const part of parts.slice(1)) total = g.add(total, part);
  return total;
}
