import { AgentFlowError, describeValue } from '@agentflow/core';
import { type TensorDtype, createHostTensor, isFloatDtype } from '../dtype/dtype';
import { type GraphState, emit } from './graph-state';
import type { GraphBuilder, Operand, SymbolicTensor } from './graph-types';
import { broadcastShapes, matmulShape, normalizeAxis, reduceShape } from './shape-inference';

/** ONNX Runtime's contrib-operator domain (FusedMatMul). */
export const MICROSOFT_DOMAIN = 'com.microsoft';

/** A scalar or small int64 constant, cached by value so repeated axes share one node. */
export function constantOf(state: GraphState, values: readonly number[], dtype: TensorDtype, shape: readonly number[]): SymbolicTensor {
  const key = `${dtype}|${shape.join(',')}|${values.join(',')}`;
  const cached = state.constantCache.get(key);
  if (cached !== undefined) return cached;
  const value = createHostTensor(dtype, shape, values);
  const [tensor] = emit(state, 'Constant', [], [{ dtype, shape }], { attributes: { value } });
  state.constantValues.set(tensor!.name, value);
  state.constantCache.set(key, tensor!);
  return tensor!;
}

export function int64Vector(state: GraphState, values: readonly number[]): SymbolicTensor {
  return constantOf(state, values, 'int64', [values.length]);
}

function operandPair(state: GraphState, a: Operand, b: Operand, operator: string): [SymbolicTensor, SymbolicTensor] {
  if (typeof a === 'number' && typeof b === 'number') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${operator}: at least one operand must be a tensor, got two numbers (${a}, ${b}).`,
      details: { a, b },
    });
  }
  const left = typeof a === 'number' ? constantOf(state, [a], (b as SymbolicTensor).dtype, []) : a;
  const right = typeof b === 'number' ? constantOf(state, [b], left.dtype, []) : b;
  if (left.dtype !== right.dtype) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${operator}: operands have different dtypes (${describeValue(left.name)} is ${left.dtype}, ${describeValue(right.name)} is ${right.dtype}); cast one first.`,
      details: { left: left.dtype, right: right.dtype },
    });
  }
  return [left, right];
}

function requireFloat(tensor: SymbolicTensor, operator: string): void {
  if (!isFloatDtype(tensor.dtype)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${operator} needs a floating-point tensor; ${describeValue(tensor.name)} is ${tensor.dtype}.`,
      details: { tensor: tensor.name, dtype: tensor.dtype },
    });
  }
}

type MathOperators = Pick<
  GraphBuilder,
  | 'add' | 'sub' | 'mul' | 'div' | 'pow' | 'min' | 'max' | 'neg' | 'sqrt' | 'reciprocal' | 'exp' | 'log'
  | 'sigmoid' | 'tanh' | 'cos' | 'sin' | 'clip' | 'equal' | 'less' | 'greater' | 'and' | 'not' | 'where'
  | 'cast' | 'identity' | 'matmul' | 'matmulTransposed' | 'softmax' | 'logSoftmax' | 'reduceSum' | 'reduceMean' | 'reduceMax' | 'argMax'
>;

export function createMathOperators(state: GraphState): MathOperators {
  const binary = (opType: string, resultDtype?: TensorDtype) => (a: Operand, b: Operand) => {
    const [left, right] = operandPair(state, a, b, opType);
    const shape = broadcastShapes(state, left.shape, right.shape, opType);
    return emit(state, opType, [left, right], [{ dtype: resultDtype ?? left.dtype, shape }])[0]!;
  };
  const unary = (opType: string, float = true) => (x: SymbolicTensor) => {
    if (float) requireFloat(x, opType);
    return emit(state, opType, [x], [{ dtype: x.dtype, shape: x.shape }])[0]!;
  };
  const normalizeAxes = (x: SymbolicTensor, axes: readonly number[], operator: string) => {
    const resolved = axes.map((axis) => normalizeAxis(axis, x.shape.length, operator));
    if (new Set(resolved).size !== resolved.length) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${operator}: axes ${describeValue(axes)} repeat an axis.`,
        details: { axes },
      });
    }
    return resolved.sort((p, q) => p - q);
  };
  const reduce = (opType: string, axesAsInput: boolean) => (x: SymbolicTensor, axes: readonly number[], keepDims = false) => {
    const resolved = normalizeAxes(x, axes, opType);
    const shape = reduceShape(x.shape, resolved, keepDims);
    const keepdims = keepDims ? 1 : 0;
    const meta = { axes: resolved, keepDims };
    if (axesAsInput) {
      return emit(state, opType, [x, int64Vector(state, resolved)], [{ dtype: x.dtype, shape }], {
        attributes: { keepdims },
        meta,
      })[0]!;
    }
    return emit(state, opType, [x], [{ dtype: x.dtype, shape }], { attributes: { axes: resolved, keepdims }, meta })[0]!;
  };
  const softmaxLike = (opType: string) => (x: SymbolicTensor, axis = -1) => {
    requireFloat(x, opType);
    const resolved = normalizeAxis(axis, x.shape.length, opType);
    return emit(state, opType, [x], [{ dtype: x.dtype, shape: x.shape }], { attributes: { axis: resolved } })[0]!;
  };
  return {
    add: binary('Add'),
    sub: binary('Sub'),
    mul: binary('Mul'),
    div: binary('Div'),
    pow: binary('Pow'),
    min: binary('Min'),
    max: binary('Max'),
    equal: binary('Equal', 'bool'),
    less: binary('Less', 'bool'),
    greater: binary('Greater', 'bool'),
    and: binary('And', 'bool'),
    not: unary('Not', false),
    neg: unary('Neg', false),
    sqrt: unary('Sqrt'),
    reciprocal: unary('Reciprocal'),
    exp: unary('Exp'),
    log: unary('Log'),
    sigmoid: unary('Sigmoid'),
    tanh: unary('Tanh'),
    cos: unary('Cos'),
    sin: unary('Sin'),
    identity: unary('Identity', false),
    clip(x, min, max) {
      const bound = (value: Operand | undefined) => {
        if (value === undefined) return undefined;
        const tensor = typeof value === 'number' ? constantOf(state, [value], x.dtype, []) : value;
        if (tensor.shape.length !== 0) {
          throw new AgentFlowError({
            code: 'SHAPE_MISMATCH',
            message: `Clip bounds must be scalars; ${describeValue(tensor.name)} has shape ${describeValue(tensor.shape)}.`,
            details: { shape: tensor.shape },
          });
        }
        return tensor;
      };
      return emit(state, 'Clip', [x, bound(min), bound(max)], [{ dtype: x.dtype, shape: x.shape }])[0]!;
    },
    where(condition, a, b) {
      if (condition.dtype !== 'bool') {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Where: the condition ${describeValue(condition.name)} must be bool, got ${condition.dtype}.`,
          details: { dtype: condition.dtype },
        });
      }
      const [left, right] = operandPair(state, a, b, 'Where');
      const shape = broadcastShapes(state, condition.shape, broadcastShapes(state, left.shape, right.shape, 'Where'), 'Where');
      return emit(state, 'Where', [condition, left, right], [{ dtype: left.dtype, shape }])[0]!;
    },
    cast(x, dtype) {
      return emit(state, 'Cast', [x], [{ dtype, shape: x.shape }], { attributes: { to: onnxDataTypeCode(dtype) } })[0]!;
    },
    matmul(a, b) {
      const [left, right] = operandPair(state, a, b, 'MatMul');
      return emit(state, 'MatMul', [left, right], [{ dtype: left.dtype, shape: matmulShape(state, left, right) }])[0]!;
    },
    matmulTransposed(a, b) {
      if (a.shape.length < 2 || b.shape.length < 2) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `matmulTransposed needs operands of rank >= 2, got ${describeValue(a.shape)} and ${describeValue(b.shape)}.`,
          details: { a: a.shape, b: b.shape },
        });
      }
      const rank = b.shape.length;
      const flipped: SymbolicTensor = { ...b, shape: [...b.shape.slice(0, -2), b.shape[rank - 1]!, b.shape[rank - 2]!] };
      const shape = matmulShape(state, a, flipped);
      return emit(state, 'FusedMatMul', [a, b], [{ dtype: a.dtype, shape }], {
        domain: MICROSOFT_DOMAIN,
        attributes: { transA: 0, transB: 1, alpha: { float: 1 } },
      })[0]!;
    },
    softmax: softmaxLike('Softmax'),
    logSoftmax: softmaxLike('LogSoftmax'),
    reduceSum: reduce('ReduceSum', true),
    reduceMean: reduce('ReduceMean', false),
    reduceMax: reduce('ReduceMax', false),
    argMax(x, axis, keepDims = false) {
      const resolved = normalizeAxis(axis, x.shape.length, 'ArgMax');
      return emit(state, 'ArgMax', [x], [{ dtype: 'int64', shape: reduceShape(x.shape, [resolved], keepDims) }], {
        attributes: { axis: resolved, keepdims: keepDims ? 1 : 0 },
      })[0]!;
    },
  };
}

const dataTypeCodes: Record<TensorDtype, number> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  uint16: 4,
  int16: 5,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
  uint32: 12,
  uint64: 13,
  bfloat16: 16,
};

/** The ONNX TensorProto.DataType code of a dtype. */
export function onnxDataTypeCode(dtype: TensorDtype): number {
  return dataTypeCodes[dtype];
}
