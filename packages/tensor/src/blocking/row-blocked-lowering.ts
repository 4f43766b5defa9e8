import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import type { CompositeLowering, LoweringContext } from '../graph/lower-composites';
import { ROW_BLOCKED, ROW_BLOCKED_GRADIENT, type RowBlockedMeta } from './row-blocked-ops';

/*
 * The row-blocked composites as ONNX `Loop`s over blocks of rows (axis 1 of every row input).
 * The rows are padded with zeros to a whole number of blocks (a Loop's scan outputs must have
 * one shape in every iteration), each block's outputs are scanned, and the scans are joined
 * and cut back to the rows. Only one block's intermediate tensors live at a time.
 */

type Tensor = SymbolicTensor;

interface RowPlan {
  /** int64 scalar: the number of blocks. */
  blocks: Tensor;
  /** Pads axis 1 with zeros to blocks * rows. */
  pad(x: Tensor): Tensor;
  /** Rows [i * rows, (i + 1) * rows) of a padded tensor, inside a loop body. */
  block(body: GraphBuilder, x: Tensor, iteration: Tensor): Tensor;
  /** Stacked scans [blocks, b, rows, ...] back to [b, sequence, ...], typed as `like`. */
  unstack(x: Tensor, like: Tensor): Tensor;
}

function planRows({ node, g }: LoweringContext): RowPlan {
  const blockSize = node.attributes.block_size as number;
  const first = node.inputs[0]!;
  const sequence = g.reshape(g.shape(first, 1, 2), []);
  // At most block_size rows; at least 1, so an empty sequence divides by 1 (and runs no block).
  const rows = g.max(g.min(sequence, blockSize), 1);
  const blocks = g.div(g.add(sequence, g.sub(rows, 1)), rows);
  const padding = g.sub(g.mul(blocks, rows), sequence);
  const zeros = (count: number) => g.constant({ dtype: 'int64', shape: [count], data: new BigInt64Array(count) });
  return {
    blocks,
    pad(x) {
      const rank = x.shape.length;
      const pads = g.concat([zeros(rank + 1), g.unsqueeze(padding, [0]), ...(rank > 2 ? [zeros(rank - 2)] : [])], 0);
      return g.op('Pad', [x, pads], { outputs: [{ dtype: x.dtype, shape: [x.shape[0]!, '?padded', ...x.shape.slice(2)] }] })[0]!;
    },
    block(body, x, iteration) {
      const start = body.unsqueeze(body.mul(iteration, rows), [0]);
      return body.slice(x, { starts: start, ends: body.add(start, body.unsqueeze(rows, [0])), axes: [1] });
    },
    unstack(x, like) {
      const rank = x.shape.length; // blocks first
      const joined = g.transpose(x, [1, 0, ...Array.from({ length: rank - 2 }, (_, index) => 2 + index)]); // [b, blocks, rows, ...]
      const target = g.concat([g.shape(joined, 0, 1), g.constant({ dtype: 'int64', shape: [1], data: BigInt64Array.from([-1n]) }), g.shape(joined, 3)], 0);
      const flat = g.op('Reshape', [joined, target], { outputs: [{ dtype: x.dtype, shape: [like.shape[0]!, '?padded', ...like.shape.slice(2)] }] })[0]!;
      const cut = g.slice(flat, { starts: [0], ends: g.unsqueeze(sequence, [0]), axes: [1] });
      return g.op('Reshape', [cut, g.shape(cut)], { outputs: [{ dtype: x.dtype, shape: like.shape }] })[0]!;
    },
  };
}

const scanOf = (x: Tensor) => ({ dtype: x.dtype, shape: [x.shape[0]!, '?rows', ...x.shape.slice(2)] });

/** Forward: the function on each block, its outputs scanned. */
const lowerForward: CompositeLowering = (context) => {
  const { node, loop } = context;
  const count = node.attributes.row_inputs as number;
  const { rowFunction } = node.meta as unknown as RowBlockedMeta;
  const plan = planRows(context);
  const padded = node.inputs.slice(0, count).map((x) => plan.pad(x!));
  const parameters = node.inputs.slice(count) as Tensor[];
  const { scans } = loop({
    tripCount: plan.blocks,
    carried: [],
    scans: node.outputs.map(scanOf),
    body: (body, iteration) => ({ carried: [], scans: rowFunction(body, padded.map((x) => plan.block(body, x, iteration)), parameters) }),
  });
  return scans.map((scan, index) => plan.unstack(scan, node.outputs[index]!));
};

/**
 * Backward: per block, the function recomputed and differentiated against the block's output
 * gradients (the gradient of sum(output * outputGradient)); the rows' gradients are scanned, the
 * parameters' carried and summed. A parameter whose gradient is needed is read through an
 * Identity in the body, so the body's autodiff stops at it.
 */
const lowerBackward: CompositeLowering = (context) => {
  const { node, g, loop } = context;
  const count = node.attributes.row_inputs as number;
  const { rowFunction, needs } = node.meta as unknown as Required<RowBlockedMeta>;
  const forwardInputs = needs.length; // the rows and parameters; the output gradients follow
  const rows = node.inputs.slice(0, count) as Tensor[];
  const parameters = node.inputs.slice(count, forwardInputs) as Tensor[];
  const seeds = node.inputs.slice(forwardInputs) as Tensor[];
  const plan = planRows(context);
  const paddedRows = rows.map((x) => plan.pad(x));
  const paddedSeeds = seeds.map((x) => plan.pad(x));
  const rowIndices = rows.map((_, index) => index).filter((index) => needs[index]);
  const parameterIndices = parameters.map((_, index) => index).filter((index) => needs[count + index]);
  const { carried, scans } = loop({
    tripCount: plan.blocks,
    carried: parameterIndices.map((index) => g.constantOfShape(g.shape(parameters[index]!), 0, parameters[index]!.dtype)),
    scans: rowIndices.map((index) => scanOf(rows[index]!)),
    body(body, iteration, sums) {
      const blockRows = paddedRows.map((x) => plan.block(body, x, iteration));
      const local = parameters.map((x, index) => (needs[count + index] ? body.identity(x) : x));
      const outputs = rowFunction(body, blockRows, local);
      const terms = outputs.map((y, index) => body.reduceSum(body.mul(y, plan.block(body, paddedSeeds[index]!, iteration)), [...y.shape.keys()], false));
      const objective = terms.reduce((sum, term) => body.add(sum, term));
      const gradients = body.gradients(objective, [...rowIndices.map((index) => blockRows[index]!), ...parameterIndices.map((index) => local[index]!)]);
      return {
        carried: parameterIndices.map((_, k) => body.add(sums[k]!, gradients[rowIndices.length + k]!)),
        scans: gradients.slice(0, rowIndices.length),
      };
    },
  });
  return [...scans.map((scan, k) => plan.unstack(scan, rows[rowIndices[k]!]!)), ...carried];
};

export const rowBlockedLowerings: Record<string, CompositeLowering> = {
  [ROW_BLOCKED]: lowerForward,
  [ROW_BLOCKED_GRADIENT]: lowerBackward,
};
