import { AgentFlowError, describeValue } from '@agentflow/core';
import { compositeGradientRules } from '../attention/blocked-attention-gradient';
import { rowBlockedGradientRules } from '../blocking/row-blocked-gradient';
import { type HostTensor, createHostTensor } from '../dtype/dtype';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { type GradientContext, type GradientRule, expandLike, reduceToShape, reshapeLike, zerosLike } from './gradient-helpers';

type Tensor = SymbolicTensor;

const input = (context: GradientContext, index: number): Tensor => context.node.inputs[index]!;
const output = (context: GradientContext, index = 0): Tensor => context.node.outputs[index]!;
const upstream = (context: GradientContext): Tensor => context.outputGradients[0]!;

/** Swaps the last two axes. */
function transposeLast(g: GraphBuilder, x: Tensor): Tensor {
  const rank = x.shape.length;
  const perm = [...Array(rank).keys()];
  [perm[rank - 2], perm[rank - 1]] = [perm[rank - 1]!, perm[rank - 2]!];
  return g.transpose(x, perm);
}

/**
 * The gradient of a 2-D weight `w` that every row of `x` [..., m, k] met, from the upstream
 * gradient `gy` [..., m, n]: the sum over all leading axes of x^T gy, as ONE Gemm over the
 * flattened rows (transA: no transposed copy of either operand, no [..., k, n] per-row products
 * summed afterwards, which for a batch of 4 rows of a linear layer would be 4 weight-sized
 * tensors). `transposedWeight`: w is [n, k] (y = x w^T), so the result is gy^T x; else w is
 * [k, n] (y = x w) and the result is x^T gy. Undefined when the shapes do not allow it (a
 * batched or symbolic weight), and the caller falls back to the general rule.
 */
function weightGradient(g: GraphBuilder, x: Tensor, gy: Tensor, w: Tensor, transposedWeight: boolean): Tensor | undefined {
  if (w.shape.length !== 2 || x.shape.length < 2 || !w.shape.every((dim) => typeof dim === 'number')) return undefined;
  const [k, n] = transposedWeight ? [w.shape[1] as number, w.shape[0] as number] : [w.shape[0] as number, w.shape[1] as number];
  const rows = x.shape.length === 2 ? x : g.reshape(x, [-1, k]); // [rows, k]
  const upstreamRows = gy.shape.length === 2 ? gy : g.reshape(gy, [-1, n]); // [rows, n]
  const [left, right] = transposedWeight ? [upstreamRows, rows] : [rows, upstreamRows];
  return g.op('Gemm', [left, right], { attributes: { transA: 1 }, outputs: [{ dtype: w.dtype, shape: w.shape }] })[0]!;
}

/** A rule for a broadcasting binary operator from the local gradients of both operands. */
function binaryRule(local: (context: GradientContext, gy: Tensor) => [() => Tensor, () => Tensor]): GradientRule {
  return (context) => {
    const [left, right] = local(context, upstream(context));
    return [
      context.needs[0] ? reduceToShape(context.g, left(), input(context, 0)) : undefined,
      context.needs[1] ? reduceToShape(context.g, right(), input(context, 1)) : undefined,
    ];
  };
}

function unaryRule(local: (g: GraphBuilder, gy: Tensor, x: Tensor, y: Tensor) => Tensor): GradientRule {
  return (context) => [local(context.g, upstream(context), input(context, 0), output(context))];
}

/** Gradient of a reduction: put the reduced axes back, then broadcast to the input's shape. */
function spreadReduced(context: GradientContext, value: Tensor): Tensor {
  const { axes, keepDims } = context.node.meta as { axes: number[]; keepDims: boolean };
  const kept = keepDims ? value : context.g.unsqueeze(value, axes);
  return expandLike(context.g, kept, input(context, 0));
}

/** Max/Min: the gradient goes to the winner; ties split it evenly. */
function extremumRule(compare: 'greater' | 'less'): GradientRule {
  return binaryRule(({ g, node }, gy) => {
    const [a, b] = [node.inputs[0]!, node.inputs[1]!];
    const wins = g.cast(g[compare](a, b), gy.dtype);
    const ties = g.cast(g.equal(a, b), gy.dtype);
    const share = g.add(wins, g.mul(ties, 0.5)); // weight of a
    return [() => g.mul(gy, share), () => g.mul(gy, g.sub(1, share))];
  });
}

/** Flat positions of every element of `x`, shaped like `x` (int64). */
function flatPositions(g: GraphBuilder, x: Tensor): Tensor {
  const positions = g.range(0, g.size(x), 1, 'int64');
  return g.op('Reshape', [positions, g.shape(x)], { outputs: [{ dtype: 'int64', shape: x.shape }] })[0]!;
}

/** Adds `updates` into a zero tensor shaped like `x` at the flat `positions` (same shape as updates). */
function scatterFlat(g: GraphBuilder, x: Tensor, positions: Tensor, updates: Tensor): Tensor {
  const zeros = g.constantOfShape(g.unsqueeze(g.size(x), [0]), 0, x.dtype); // [size(x)]
  const sum = g.scatterElements(zeros, g.reshape(positions, [-1]), g.reshape(updates, [-1]), 0, 'add');
  return reshapeLike(g, sum, x);
}

/**
 * Pads [begins..., ends...] that undo a Slice, when its bounds are constants, its steps are 1
 * and every bound resolves without knowing a symbolic dimension; otherwise undefined.
 */
function staticSlicePads(context: GradientContext): HostTensor | undefined {
  const values = context.node.meta.constants as ((name: string) => HostTensor | undefined) | undefined;
  const [x, starts, ends, axes, steps] = context.node.inputs;
  if (values === undefined || x === undefined) return undefined;
  const read = (tensor: SymbolicTensor | undefined) => {
    const value = tensor === undefined ? undefined : values(tensor.name);
    return value === undefined ? undefined : Array.from(value.data as BigInt64Array, Number);
  };
  const [startList, endList, axisList, stepList] = [read(starts), read(ends), read(axes), read(steps)];
  if (!startList || !endList || !axisList || !stepList || stepList.some((step) => step !== 1)) return undefined;
  const rank = x.shape.length;
  const pads = new Array<number>(2 * rank).fill(0);
  for (let index = 0; index < axisList.length; index++) {
    const axis = axisList[index]!;
    const dim = x.shape[axis]!;
    let start = startList[index]!;
    let end = endList[index]!;
    if (typeof dim === 'number') {
      start = Math.min(Math.max(start < 0 ? start + dim : start, 0), dim);
      end = Math.min(Math.max(end < 0 ? end + dim : end, start), dim);
      pads[axis] = start;
      pads[axis + rank] = dim - end;
    } else {
      // Symbolic dimension: only "from a non-negative start to the end" or "to -k" resolve.
      if (start < 0) return undefined;
      pads[axis] = start;
      if (end < 0) pads[axis + rank] = -end;
      else if (end < 2 ** 31 - 1) return undefined;
    }
  }
  return createHostTensor('int64', [2 * rank], pads);
}

const asInt64 = (g: GraphBuilder, indices: Tensor): Tensor => (indices.dtype === 'int64' ? indices : g.cast(indices, 'int64'));

/** Gradient rules by ONNX operator type. */
export const gradientRules: Record<string, GradientRule> = {
  Add: binaryRule((_, gy) => [() => gy, () => gy]),
  Sub: binaryRule(({ g }, gy) => [() => gy, () => g.neg(gy)]),
  Mul: binaryRule(({ g, node }, gy) => [() => g.mul(gy, node.inputs[1]!), () => g.mul(gy, node.inputs[0]!)]),
  // d(a/b)/db = -a/b^2 = -y/b
  Div: binaryRule(({ g, node }, gy) => [
    () => g.div(gy, node.inputs[1]!),
    () => g.neg(g.div(g.mul(gy, node.outputs[0]!), node.inputs[1]!)),
  ]),
  Pow: binaryRule(({ g, node }, gy) => {
    const [a, b, y] = [node.inputs[0]!, node.inputs[1]!, node.outputs[0]!];
    return [() => g.mul(gy, g.mul(b, g.pow(a, g.sub(b, 1)))), () => g.mul(gy, g.mul(y, g.log(a)))];
  }),
  Max: extremumRule('greater'),
  Min: extremumRule('less'),
  Neg: unaryRule((g, gy) => g.neg(gy)),
  Identity: unaryRule((_, gy) => gy),
  Sqrt: unaryRule((g, gy, _x, y) => g.div(g.mul(gy, 0.5), y)),
  Reciprocal: unaryRule((g, gy, _x, y) => g.neg(g.mul(gy, g.mul(y, y)))),
  Exp: unaryRule((g, gy, _x, y) => g.mul(gy, y)),
  Log: unaryRule((g, gy, x) => g.div(gy, x)),
  Sigmoid: unaryRule((g, gy, _x, y) => g.mul(gy, g.mul(y, g.sub(1, y)))),
  Tanh: unaryRule((g, gy, _x, y) => g.mul(gy, g.sub(1, g.mul(y, y)))),
  Cos: unaryRule((g, gy, x) => g.neg(g.mul(gy, g.sin(x)))),
  Sin: unaryRule((g, gy, x) => g.mul(gy, g.cos(x))),
  Cast: (context) => {
    const x = input(context, 0);
    return [x.dtype === 'float32' || x.dtype === 'float64' || x.dtype === 'float16' ? context.g.cast(upstream(context), x.dtype) : undefined];
  },
  Clip: ({ g, node, outputGradients }) => {
    const [x, low, high] = [node.inputs[0]!, node.inputs[1], node.inputs[2]];
    let pass: Tensor | undefined;
    if (low !== undefined) pass = g.not(g.less(x, low));
    if (high !== undefined) {
      const below = g.not(g.greater(x, high));
      pass = pass === undefined ? below : g.and(pass, below);
    }
    const gy = outputGradients[0]!;
    // Bounds get no gradient: they are hyper-parameters here.
    return [pass === undefined ? gy : g.where(pass, gy, 0), undefined, undefined];
  },
  Where: ({ g, node, outputGradients, needs }) => {
    const [condition, a, b] = [node.inputs[0]!, node.inputs[1]!, node.inputs[2]!];
    const gy = outputGradients[0]!;
    return [
      undefined,
      needs[1] ? reduceToShape(g, g.where(condition, gy, 0), a) : undefined,
      needs[2] ? reduceToShape(g, g.where(condition, 0, gy), b) : undefined,
    ];
  },
  MatMul: (context) => {
    const { g, needs } = context;
    const [a, b, gy] = [input(context, 0), input(context, 1), upstream(context)];
    if (a.shape.length < 2 || b.shape.length < 2) {
      throw new AgentFlowError({
        code: 'UNSUPPORTED_OPERATOR',
        message: `MatMul gradient needs operands of rank >= 2 (node ${context.node.name}: ${describeValue(a.shape)} x ${describeValue(b.shape)}); unsqueeze vectors first.`,
        details: { node: context.node.name },
      });
    }
    return [
      needs[0] ? reduceToShape(g, g.matmul(gy, transposeLast(g, b)), a) : undefined, // [..., m, k]
      needs[1] ? (weightGradient(g, a, gy, b, false) ?? reduceToShape(g, g.matmul(transposeLast(g, a), gy), b)) : undefined, // [..., k, n]
    ];
  },
  // a @ b^T as matmulTransposed emits it (transA 0, transB 1, alpha 1).
  'com.microsoft.FusedMatMul': (context) => {
    const { g, needs, node } = context;
    const { transA, transB, alpha } = node.attributes as { transA?: number; transB?: number; alpha?: { float: number } };
    if ((transA ?? 0) !== 0 || (transB ?? 0) !== 1 || (alpha?.float ?? 1) !== 1) {
      throw new AgentFlowError({
        code: 'UNSUPPORTED_OPERATOR',
        message: `FusedMatMul gradient supports transA 0, transB 1, alpha 1 only (node ${node.name}: transA ${transA}, transB ${transB}, alpha ${alpha?.float}).`,
        details: { node: node.name },
      });
    }
    const [a, b, gy] = [input(context, 0), input(context, 1), upstream(context)];
    return [
      needs[0] ? reduceToShape(g, g.matmul(gy, b), a) : undefined, // [..., m, n] x [..., n, k]
      needs[1] ? (weightGradient(g, a, gy, b, true) ?? reduceToShape(g, g.matmul(transposeLast(g, gy), a), b)) : undefined, // [..., n, m] x [..., m, k]
    ];
  },
  Softmax: (context) => {
    const { g } = context;
    const [y, gy] = [output(context), upstream(context)];
    const axis = context.node.attributes.axis as number;
    // dx = y * (gy - sum(gy * y))
    return [g.mul(y, g.sub(gy, g.reduceSum(g.mul(gy, y), [axis], true)))];
  },
  LogSoftmax: (context) => {
    const { g } = context;
    const [y, gy] = [output(context), upstream(context)];
    const axis = context.node.attributes.axis as number;
    // dx = gy - softmax(x) * sum(gy)
    return [g.sub(gy, g.mul(g.exp(y), g.reduceSum(gy, [axis], true)))];
  },
  ReduceSum: (context) => [spreadReduced(context, upstream(context)), undefined],
  ReduceMean: (context) => {
    const { g } = context;
    const [x, y] = [input(context, 0), output(context)];
    const count = g.div(g.cast(g.size(x), x.dtype), g.cast(g.size(y), x.dtype));
    return [spreadReduced(context, g.div(upstream(context), count))];
  },
  ReduceMax: (context) => {
    const { g } = context;
    const { axes, keepDims } = context.node.meta as { axes: number[]; keepDims: boolean };
    const [x, y] = [input(context, 0), output(context)];
    const peak = keepDims ? y : g.unsqueeze(y, axes);
    const mask = g.cast(g.equal(x, peak), x.dtype);
    // Ties share the gradient.
    const weights = g.div(mask, g.reduceSum(mask, axes, true));
    return [g.mul(spreadReduced(context, upstream(context)), weights)];
  },
  Gather: (context) => {
    const { g } = context;
    const [data, indices, gy] = [input(context, 0), asInt64(context.g, input(context, 1)), upstream(context)];
    const axis = context.node.attributes.axis as number;
    if (axis === 0) {
      // Embedding tables: rows hit several times accumulate.
      return [g.scatterND(zerosLike(g, data), g.unsqueeze(indices, [-1]), gy, 'add'), undefined];
    }
    const positions = g.gather(flatPositions(g, data), indices, axis);
    return [scatterFlat(g, data, positions, gy), undefined];
  },
  GatherElements: (context) => {
    const { g } = context;
    const [data, indices] = [input(context, 0), input(context, 1)];
    const axis = context.node.attributes.axis as number;
    return [g.scatterElements(zerosLike(g, data), indices, upstream(context), axis, 'add'), undefined];
  },
  Reshape: (context) => [reshapeLike(context.g, upstream(context), input(context, 0)), undefined],
  Unsqueeze: (context) => [reshapeLike(context.g, upstream(context), input(context, 0)), undefined],
  Squeeze: (context) => [reshapeLike(context.g, upstream(context), input(context, 0)), undefined],
  Expand: (context) => [reduceToShape(context.g, upstream(context), input(context, 0)), undefined],
  Transpose: (context) => {
    const perm = context.node.attributes.perm as number[];
    const inverse = perm.map((_, index) => perm.indexOf(index));
    return [context.g.transpose(upstream(context), inverse)];
  },
  Concat: (context) => {
    const { g, node } = context;
    const axis = node.attributes.axis as number;
    const sizes = g.concat(
      node.inputs.map((x) => g.shape(x!, axis, axis + 1)),
      0,
    );
    return g.op('Split', [upstream(context), sizes], {
      attributes: { axis },
      outputs: node.inputs.map((x) => ({ dtype: x!.dtype, shape: x!.shape })),
    });
  },
  Split: (context) => {
    const { g, node, outputGradients } = context;
    const axis = node.attributes.axis as number;
    const parts = node.outputs.map((y, index) => outputGradients[index] ?? zerosLike(g, y));
    return [reshapeLike(g, g.concat(parts, axis), node.inputs[0]!), undefined];
  },
  Slice: (context) => {
    const { g, node } = context;
    const x = node.inputs[0]!;
    const gy = upstream(context);
    const pads = staticSlicePads(context);
    // Contiguous slices with constant bounds: the gradient is the upstream gradient zero-padded back.
    if (pads !== undefined) return [g.op('Pad', [gy, g.constant(pads)], { outputs: [{ dtype: x.dtype, shape: x.shape }] })[0]!];
    // Slice the flat positions the same way, then add the gradient back at those positions.
    const positions = g.op('Slice', [flatPositions(g, x), ...node.inputs.slice(1)], {
      outputs: [{ dtype: 'int64', shape: gy.shape }],
    })[0]!;
    return [scatterFlat(g, x, positions, gy), undefined, undefined, undefined, undefined];
  },
  ...compositeGradientRules,
  ...rowBlockedGradientRules,
};
