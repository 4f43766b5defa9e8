import { AgentFlowError, describeValue } from '@agentflow/core';
import type { GraphState } from './graph-state';
import { unknownDimension } from './graph-state';
import type { Dimension, SymbolicTensor } from './graph-types';

export function shapeError(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'SHAPE_MISMATCH', message, details });
}

/** Resolves a possibly negative axis against `rank`, or throws naming the operator. */
export function normalizeAxis(axis: number, rank: number, operator: string): number {
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${operator}: axis ${describeValue(axis)} is out of range for a tensor of rank ${rank} (expected -${rank}..${rank - 1}).`,
      details: { axis, rank },
    });
  }
  return axis < 0 ? axis + rank : axis;
}

/** numpy broadcasting of two shapes; unknown results get fresh symbolic names. */
export function broadcastShapes(
  state: GraphState,
  left: readonly Dimension[],
  right: readonly Dimension[],
  operator: string,
): Dimension[] {
  const rank = Math.max(left.length, right.length);
  const result: Dimension[] = [];
  for (let i = 0; i < rank; i++) {
    const a = left[left.length - rank + i] ?? 1;
    const b = right[right.length - rank + i] ?? 1;
    if (a === b) result.push(a);
    else if (a === 1) result.push(b);
    else if (b === 1) result.push(a);
    else if (typeof a === 'number' && typeof b === 'number') {
      throw shapeError(
        `${operator}: shapes ${describeValue(left)} and ${describeValue(right)} do not broadcast (dimension ${a} vs ${b}).`,
        { left, right },
      );
    } else if (typeof a === 'number') result.push(a);
    else if (typeof b === 'number') result.push(b);
    else result.push(unknownDimension(state));
  }
  return result;
}

export function matmulShape(state: GraphState, a: SymbolicTensor, b: SymbolicTensor): Dimension[] {
  if (a.shape.length < 1 || b.shape.length < 1) {
    throw shapeError(`MatMul needs tensors of rank >= 1, got ${describeValue(a.shape)} and ${describeValue(b.shape)}.`, {
      a: a.shape,
      b: b.shape,
    });
  }
  const left = a.shape.length === 1 ? [1, ...a.shape] : [...a.shape];
  const right = b.shape.length === 1 ? [...b.shape, 1] : [...b.shape];
  const k1 = left[left.length - 1]!;
  const k2 = right[right.length - 2]!;
  if (typeof k1 === 'number' && typeof k2 === 'number' && k1 !== k2) {
    throw shapeError(
      `MatMul: inner dimensions differ: ${describeValue(a.name)} ${describeValue(a.shape)} x ${describeValue(b.name)} ${describeValue(b.shape)}.`,
      { a: a.shape, b: b.shape },
    );
  }
  const batch = broadcastShapes(state, left.slice(0, -2), right.slice(0, -2), 'MatMul');
  const result = [...batch, left[left.length - 2]!, right[right.length - 1]!];
  if (a.shape.length === 1) result.splice(result.length - 2, 1);
  if (b.shape.length === 1) result.splice(result.length - 1, 1);
  return result;
}

export function reduceShape(shape: readonly Dimension[], axes: readonly number[], keepDims: boolean): Dimension[] {
  const set = new Set(axes);
  const result: Dimension[] = [];
  shape.forEach((dim, index) => {
    if (!set.has(index)) result.push(dim);
    else if (keepDims) result.push(1);
  });
  return result;
}

/** Output shape of Reshape with a static target (0 copies, -1 infers when everything is known). */
export function reshapeShape(state: GraphState, input: readonly Dimension[], target: readonly number[]): Dimension[] {
  const result: Dimension[] = target.map((value, index) => {
    if (value === 0) {
      const dim = input[index];
      if (dim === undefined) {
        throw shapeError(`Reshape: 0 at position ${index} copies a dimension that ${describeValue(input)} lacks.`, { input, target });
      }
      return dim;
    }
    return value;
  });
  const inferred = result.indexOf(-1);
  if (inferred >= 0) {
    const known = result.filter((_, index) => index !== inferred);
    const total = input.every((dim) => typeof dim === 'number') ? (input as number[]).reduce((a, b) => a * b, 1) : undefined;
    const rest = known.every((dim) => typeof dim === 'number') ? (known as number[]).reduce((a, b) => a * b, 1) : undefined;
    result[inferred] = total !== undefined && rest !== undefined && rest > 0 ? total / rest : unknownDimension(state);
  }
  if (input.every((dim) => typeof dim === 'number') && result.every((dim) => typeof dim === 'number')) {
    const before = (input as number[]).reduce((a, b) => a * b, 1);
    const after = (result as number[]).reduce((a, b) => a * b, 1);
    if (before !== after || !Number.isInteger(after)) {
      throw shapeError(`Reshape: cannot reshape ${describeValue(input)} (${before} elements) to ${describeValue(target)}.`, {
        input,
        target,
      });
    }
  }
  return result;
}

/** Length of one sliced dimension under ONNX clamping rules, when the dimension is known. */
export function slicedLength(dim: Dimension, start: number, end: number, step: number, state: GraphState): Dimension {
  if (typeof dim !== 'number') return unknownDimension(state);
  const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);
  let from = start < 0 ? start + dim : start;
  let to = end < 0 ? end + dim : end;
  if (step > 0) {
    from = clamp(from, 0, dim);
    to = clamp(to, 0, dim);
    return Math.max(0, Math.ceil((to - from) / step));
  }
  from = clamp(from, 0, dim - 1);
  to = clamp(to, -1, dim - 1);
  return Math.max(0, Math.ceil((to - from) / step));
}
