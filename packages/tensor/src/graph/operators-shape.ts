import { AgentFlowError, describeValue } from '@agentflow/core';
import { type TensorDtype, createHostTensor } from '../dtype/dtype';
import { type GraphState, emit, unknownDimension } from './graph-state';
import type { Dimension, GraphBuilder, Operand, SymbolicTensor } from './graph-types';
import { constantOf, int64Vector } from './operators-math';
import { broadcastShapes, normalizeAxis, reshapeShape, shapeError, slicedLength } from './shape-inference';

type ShapeOperators = Pick<
  GraphBuilder,
  | 'gather' | 'gatherElements' | 'scatterND' | 'scatterElements' | 'reshape' | 'transpose' | 'unsqueeze'
  | 'squeeze' | 'concat' | 'slice' | 'split' | 'expand' | 'shape' | 'size' | 'range' | 'constantOfShape'
>;

function requireIndexTensor(tensor: SymbolicTensor, operator: string, role: string): void {
  if (tensor.dtype !== 'int64' && tensor.dtype !== 'int32') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${operator}: ${role} ${describeValue(tensor.name)} must be int64 or int32, got ${tensor.dtype}.`,
      details: { dtype: tensor.dtype },
    });
  }
}

/** Rank-known dimensions for a runtime shape tensor (int64 1-D of static length). */
function dynamicShapeDims(state: GraphState, shape: SymbolicTensor, operator: string): Dimension[] {
  const length = shape.shape[0];
  if (shape.dtype !== 'int64' || shape.shape.length !== 1 || typeof length !== 'number') {
    throw shapeError(`${operator}: a shape tensor must be int64 1-D of known length; got ${shape.dtype} ${describeValue(shape.shape)}.`, {
      shape: shape.shape,
    });
  }
  const value = state.constantValues.get(shape.name);
  if (value !== undefined) return Array.from(value.data as BigInt64Array, (entry) => Number(entry));
  // Shape(y) (or a range of it) carries y's symbolic dimensions along.
  const producer = state.producers.get(shape.name);
  if (producer?.opType === 'Shape' && producer.inputs[0] !== undefined) {
    const source = producer.inputs[0].shape;
    const start = (producer.attributes.start as number | undefined) ?? 0;
    const end = (producer.attributes.end as number | undefined) ?? source.length;
    return source.slice(start, end);
  }
  return Array.from({ length }, () => unknownDimension(state));
}

export function createShapeOperators(state: GraphState): ShapeOperators {
  return {
    gather(data, indices, axis = 0) {
      requireIndexTensor(indices, 'Gather', 'indices');
      const resolved = normalizeAxis(axis, data.shape.length, 'Gather');
      const shape = [...data.shape.slice(0, resolved), ...indices.shape, ...data.shape.slice(resolved + 1)];
      return emit(state, 'Gather', [data, indices], [{ dtype: data.dtype, shape }], { attributes: { axis: resolved } })[0]!;
    },
    gatherElements(data, indices, axis) {
      requireIndexTensor(indices, 'GatherElements', 'indices');
      const resolved = normalizeAxis(axis, data.shape.length, 'GatherElements');
      if (indices.shape.length !== data.shape.length) {
        throw shapeError(`GatherElements: indices rank ${indices.shape.length} differs from data rank ${data.shape.length}.`, {
          data: data.shape,
          indices: indices.shape,
        });
      }
      return emit(state, 'GatherElements', [data, indices], [{ dtype: data.dtype, shape: indices.shape }], {
        attributes: { axis: resolved },
      })[0]!;
    },
    scatterND(data, indices, updates, reduction = 'none') {
      requireIndexTensor(indices, 'ScatterND', 'indices');
      return emit(state, 'ScatterND', [data, indices, updates], [{ dtype: data.dtype, shape: data.shape }], {
        attributes: { reduction },
      })[0]!;
    },
    scatterElements(data, indices, updates, axis, reduction = 'none') {
      requireIndexTensor(indices, 'ScatterElements', 'indices');
      const resolved = normalizeAxis(axis, data.shape.length, 'ScatterElements');
      return emit(state, 'ScatterElements', [data, indices, updates], [{ dtype: data.dtype, shape: data.shape }], {
        attributes: { axis: resolved, reduction },
      })[0]!;
    },
    reshape(x, shape) {
      if (Array.isArray(shape)) {
        const target = shape as readonly number[];
        const dims = reshapeShape(state, x.shape, target);
        return emit(state, 'Reshape', [x, int64Vector(state, target)], [{ dtype: x.dtype, shape: dims }])[0]!;
      }
      const tensor = shape as SymbolicTensor;
      const dims = dynamicShapeDims(state, tensor, 'Reshape');
      return emit(state, 'Reshape', [x, tensor], [{ dtype: x.dtype, shape: dims.map((d) => (typeof d === 'number' && d <= 0 ? unknownDimension(state) : d)) }])[0]!;
    },
    transpose(x, perm) {
      const rank = x.shape.length;
      const order = perm ? perm.map((axis) => normalizeAxis(axis, rank, 'Transpose')) : [...Array(rank).keys()].reverse();
      if (order.length !== rank || new Set(order).size !== rank) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Transpose: perm ${describeValue(perm)} is not a permutation of ${rank} axes.`,
          details: { perm, rank },
        });
      }
      return emit(state, 'Transpose', [x], [{ dtype: x.dtype, shape: order.map((axis) => x.shape[axis]!) }], {
        attributes: { perm: order },
      })[0]!;
    },
    unsqueeze(x, axes) {
      const rank = x.shape.length + axes.length;
      const resolved = axes.map((axis) => normalizeAxis(axis, rank, 'Unsqueeze')).sort((a, b) => a - b);
      const shape: Dimension[] = [];
      let source = 0;
      for (let index = 0; index < rank; index++) shape.push(resolved.includes(index) ? 1 : x.shape[source++]!);
      return emit(state, 'Unsqueeze', [x, int64Vector(state, resolved)], [{ dtype: x.dtype, shape }], { meta: { axes: resolved } })[0]!;
    },
    squeeze(x, axes) {
      const resolved = axes.map((axis) => normalizeAxis(axis, x.shape.length, 'Squeeze'));
      for (const axis of resolved) {
        const dim = x.shape[axis];
        if (typeof dim === 'number' && dim !== 1) {
          throw shapeError(`Squeeze: axis ${axis} of ${describeValue(x.name)} ${describeValue(x.shape)} has size ${dim}, not 1.`, {
            shape: x.shape,
          });
        }
      }
      const shape = x.shape.filter((_, index) => !resolved.includes(index));
      return emit(state, 'Squeeze', [x, int64Vector(state, resolved)], [{ dtype: x.dtype, shape }], { meta: { axes: resolved } })[0]!;
    },
    concat(tensors, axis) {
      const first = tensors[0];
      if (first === undefined) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'Concat needs at least one tensor.', details: {} });
      }
      const resolved = normalizeAxis(axis, first.shape.length, 'Concat');
      let total: Dimension = 0;
      for (const tensor of tensors) {
        if (tensor.shape.length !== first.shape.length || tensor.dtype !== first.dtype) {
          throw shapeError(`Concat: ${describeValue(tensor.name)} (${tensor.dtype} ${describeValue(tensor.shape)}) does not match ${first.dtype} rank ${first.shape.length}.`, {
            shape: tensor.shape,
          });
        }
        const dim = tensor.shape[resolved]!;
        total = typeof total === 'number' && typeof dim === 'number' ? total + dim : unknownDimension(state);
      }
      const shape = first.shape.map((dim, index) => (index === resolved ? total : dim));
      return emit(state, 'Concat', tensors, [{ dtype: first.dtype, shape }], { attributes: { axis: resolved } })[0]!;
    },
    slice(x, settings) {
      const rank = x.shape.length;
      const count = Array.isArray(settings.starts) ? settings.starts.length : ((settings.starts as SymbolicTensor).shape[0] as number);
      const axes = (settings.axes ?? [...Array(count).keys()]).map((axis) => normalizeAxis(axis, rank, 'Slice'));
      const steps = settings.steps ?? axes.map(() => 1);
      const starts = Array.isArray(settings.starts) ? int64Vector(state, settings.starts) : (settings.starts as SymbolicTensor);
      const ends = Array.isArray(settings.ends) ? int64Vector(state, settings.ends) : (settings.ends as SymbolicTensor);
      const shape = [...x.shape];
      axes.forEach((axis, index) => {
        const start = Array.isArray(settings.starts) ? settings.starts[index] : undefined;
        const end = Array.isArray(settings.ends) ? settings.ends[index] : undefined;
        shape[axis] =
          start === undefined || end === undefined
            ? unknownDimension(state)
            : slicedLength(x.shape[axis]!, start, end, steps[index]!, state);
      });
      return emit(state, 'Slice', [x, starts, ends, int64Vector(state, axes), int64Vector(state, steps)], [{ dtype: x.dtype, shape }], {
        // Lets the gradient rule read constant bounds.
        meta: { constants: (name: string) => state.constantValues.get(name) },
      })[0]!;
    },
    split(x, sizes, axis) {
      const resolved = normalizeAxis(axis, x.shape.length, 'Split');
      const dim = x.shape[resolved]!;
      const total = sizes.reduce((a, b) => a + b, 0);
      if (typeof dim === 'number' && dim !== total) {
        throw shapeError(`Split: sizes ${describeValue(sizes)} add up to ${total}, but axis ${resolved} of ${describeValue(x.shape)} is ${dim}.`, {
          sizes,
          shape: x.shape,
        });
      }
      const outputs = sizes.map((size) => ({ dtype: x.dtype, shape: x.shape.map((d, index) => (index === resolved ? size : d)) }));
      return emit(state, 'Split', [x, int64Vector(state, sizes)], outputs, { attributes: { axis: resolved }, meta: { sizes } });
    },
    expand(x, shape) {
      if (Array.isArray(shape)) {
        const dims = broadcastShapes(state, x.shape, shape as number[], 'Expand');
        return emit(state, 'Expand', [x, int64Vector(state, shape as number[])], [{ dtype: x.dtype, shape: dims }])[0]!;
      }
      const tensor = shape as SymbolicTensor;
      const dims = broadcastShapes(state, x.shape, dynamicShapeDims(state, tensor, 'Expand'), 'Expand');
      return emit(state, 'Expand', [x, tensor], [{ dtype: x.dtype, shape: dims }])[0]!;
    },
    shape(x, start, end) {
      const rank = x.shape.length;
      const from = start === undefined ? 0 : start < 0 ? start + rank : start;
      const to = end === undefined ? rank : end < 0 ? end + rank : end;
      const attributes: Record<string, number> = {};
      if (start !== undefined) attributes.start = from;
      if (end !== undefined) attributes.end = to;
      return emit(state, 'Shape', [x], [{ dtype: 'int64', shape: [Math.max(0, to - from)] }], { attributes })[0]!;
    },
    size(x) {
      return emit(state, 'Size', [x], [{ dtype: 'int64', shape: [] }])[0]!;
    },
    range(start, limit, delta, dtype: TensorDtype = 'int64') {
      const scalar = (value: Operand) => (typeof value === 'number' ? constantOf(state, [value], dtype, []) : value);
      const [a, b, c] = [scalar(start), scalar(limit), scalar(delta)];
      return emit(state, 'Range', [a, b, c], [{ dtype: a.dtype, shape: [unknownDimension(state)] }])[0]!;
    },
    constantOfShape(shape, value, dtype: TensorDtype = 'float32') {
      const dims = dynamicShapeDims(state, shape, 'ConstantOfShape');
      // ConstantOfShape takes its fill value as a one-element tensor attribute.
      const fill = createHostTensor(dtype, [1], [value]);
      return emit(state, 'ConstantOfShape', [shape], [{ dtype, shape: dims }], { attributes: { value: fill } })[0]!;
    },
  };
}

