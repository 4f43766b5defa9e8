import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import type { CompositeLowering, LoweringContext } from '../graph/lower-composites';
import { BLOCKED_ATTENTION, BLOCKED_ATTENTION_GRADIENT, type BlockedAttentionAttributes } from './blocked-attention-ops';

/*
 * The blocked-attention composites as ONNX `Loop`s over blocks of query rows (FlashAttention,
 * Dao et al. 2022, without its key blocks: each block of rows meets every key, so its softmax is
 * exact and no running rescale is needed). Shapes: q [b, h, g, s, d] (g query heads per key/value
 * head), k and v [b, h, t, d]; a block holds `rows` query rows of each of the g heads, and the
 * products run on them merged, [b, h, g * rows, .], since the g heads share one key/value head.
 */

type Tensor = SymbolicTensor;

/** What both loops share: block geometry, the padded queries' layout and the block's additive mask. */
interface BlockPlan {
  attributes: BlockedAttentionAttributes;
  groups: number;
  headDim: number;
  /** int64 scalars: the block's rows, the number of blocks, and the sequence length. */
  rows: Tensor;
  blocks: Tensor;
  sequence: Tensor;
  /** Pads axis 3 ([b, h, g, s, ...]) to blocks * rows. */
  pad(x: Tensor): Tensor;
  /** Rows [i * rows, (i + 1) * rows) of a padded tensor along axis 3, inside a loop body. */
  block(body: GraphBuilder, x: Tensor, iteration: Tensor): Tensor;
  /** Stacked scans [blocks, b, h, g, rows, ...] back to [b, h, g, s, ...]. */
  unstack(x: Tensor): Tensor;
  /** The block's scores scale * q.k + mask, [b, h, g, rows, t], from q's block [b, h, g, rows, d]. */
  scores(body: GraphBuilder, queryBlock: Tensor, iteration: Tensor): Tensor;
  /** [b, h, g, rows, t] -> [b, h, g * rows, t]. */
  merged(body: GraphBuilder, x: Tensor): Tensor;
}

function planBlocks({ node, g }: LoweringContext): BlockPlan {
  const attributes = node.attributes as unknown as BlockedAttentionAttributes;
  const [query, key, , keyMask] = node.inputs as [Tensor, Tensor, Tensor, Tensor | undefined];
  const groups = query.shape[2] as number;
  const headDim = query.shape[4] as number;
  const scalar = (x: Tensor) => g.reshape(x, []);
  const sequence = scalar(g.shape(query, 3, 4));
  const total = scalar(g.shape(key, 2, 3));
  // At most block_size rows; at least 1, so an empty sequence divides by 1 (and runs no block).
  const rows = g.max(g.min(sequence, attributes.block_size), 1);
  const blocks = g.div(g.add(sequence, g.sub(rows, 1)), rows);
  const padding = g.sub(g.mul(blocks, rows), sequence);
  const keyCount = g.shape(key, 2, 3); // [1]
  const mergeTarget = g.concat([g.constant({ dtype: 'int64', shape: [3], data: BigInt64Array.from([0n, 0n, -1n]) }), keyCount], 0);
  const splitTarget = g.concat([g.constant({ dtype: 'int64', shape: [4], data: BigInt64Array.from([0n, 0n, BigInt(groups), -1n]) }), keyCount], 0);
  const keyIndex = g.unsqueeze(g.range(0, total, 1, 'int64'), [0]); // [1, t]
  const past = g.sub(total, sequence); // query row i sits at position past + i
  const visibleKeys = keyMask === undefined ? undefined : g.unsqueeze(keyMask.dtype === 'bool' ? keyMask : g.cast(keyMask, 'bool'), [1, 2, 3]); // [b, 1, 1, 1, t]
  const maskedScore = attributes.masked_score.float;
  const dtype = query.dtype;
  return {
    attributes,
    groups,
    headDim,
    rows,
    blocks,
    sequence,
    pad(x) {
      const rank = x.shape.length;
      const zeros = (count: number) => g.constant({ dtype: 'int64', shape: [count], data: new BigInt64Array(count) });
      const pads = g.concat([zeros(rank + 3), g.unsqueeze(padding, [0]), zeros(rank - 4)], 0);
      return g.op('Pad', [x, pads], { outputs: [{ dtype: x.dtype, shape: [...x.shape.slice(0, 3), '?padded', ...x.shape.slice(4)] }] })[0]!;
    },
    block(body, x, iteration) {
      const start = body.unsqueeze(body.mul(iteration, rows), [0]);
      return body.slice(x, { starts: start, ends: body.add(start, body.unsqueeze(rows, [0])), axes: [3] });
    },
    unstack(x) {
      const rank = x.shape.length; // blocks first
      const perm = [1, 2, 3, 0, ...Array.from({ length: rank - 4 }, (_, index) => 4 + index)];
      const joined = g.reshape(g.transpose(x, perm), [0, 0, 0, -1, ...(x.shape.slice(5) as number[])]); // [b, h, g, blocks * rows, ...]
      return g.slice(joined, { starts: [0], ends: g.unsqueeze(sequence, [0]), axes: [3] });
    },
    scores(body, queryBlock, iteration) {
      const queries = body.reshape(queryBlock, [0, 0, -1, headDim]); // [b, h, g * rows, d]
      const products = body.op('FusedMatMul', [queries, key], {
        domain: 'com.microsoft',
        attributes: { transA: 0, transB: 1, alpha: { float: attributes.scale.float } },
        outputs: [{ dtype, shape: [query.shape[0]!, query.shape[1]!, '?rows', key.shape[2]!] }],
      })[0]!; // [b, h, g * rows, t]
      const scores = body.reshape(products, splitTarget); // [b, h, g, rows, t]
      if (attributes.causal === 0 && visibleKeys === undefined) return scores;
      const first = body.mul(iteration, rows);
      const positions = body.unsqueeze(body.add(body.range(first, body.add(first, rows), 1, 'int64'), past), [1]); // [rows, 1]
      const causal = attributes.causal === 0 ? undefined : body.not(body.greater(keyIndex, positions)); // [rows, t]
      const visible = causal === undefined ? visibleKeys! : visibleKeys === undefined ? causal : body.and(visibleKeys, causal);
      // The unblocked formula's mask: (visible - 1) * -maskedScore, 0 where visible.
      return body.add(scores, body.mul(body.sub(body.cast(visible, dtype), 1), -maskedScore));
    },
    merged(body, x) {
      return body.reshape(x, mergeTarget);
    },
  };
}

function matmul(body: GraphBuilder, a: Tensor, b: Tensor, transA: number, transB: number, alpha: number, shape: Tensor['shape']): Tensor {
  return body.op('FusedMatMul', [a, b], { domain: 'com.microsoft', attributes: { transA, transB, alpha: { float: alpha } }, outputs: [{ dtype: a.dtype, shape }] })[0]!;
}

/** Forward: per block, the probabilities against every key, the block's output and its rows' softmax statistics. */
const lowerForward: CompositeLowering = (context) => {
  const { node, loop } = context;
  const [query, , value] = node.inputs as [Tensor, Tensor, Tensor];
  const plan = planBlocks(context);
  const paddedQuery = plan.pad(query);
  const [b, h, groups, , d] = query.shape;
  const { scans } = loop({
    tripCount: plan.blocks,
    carried: [],
    scans: [
      { dtype: query.dtype, shape: [b!, h!, groups!, '?rows', d!] },
      { dtype: query.dtype, shape: [b!, h!, groups!, '?rows'] },
      { dtype: query.dtype, shape: [b!, h!, groups!, '?rows'] },
    ],
    body(body, iteration) {
      const scores = plan.scores(body, plan.block(body, paddedQuery, iteration), iteration); // [b, h, g, rows, t]
      const peak = body.reduceMax(scores, [-1], true);
      const exponentials = body.exp(body.sub(scores, peak));
      const sum = body.reduceSum(exponentials, [-1], true); // [b, h, g, rows, 1]
      const probabilities = plan.merged(body, body.div(exponentials, sum)); // [b, h, g * rows, t]
      const attended = body.reshape(body.matmul(probabilities, value), [0, 0, plan.groups, -1, plan.headDim]); // [b, h, g, rows, d]
      return { carried: [], scans: [attended, body.squeeze(peak, [4]), body.squeeze(body.log(sum), [4])] }; // [b, h, g, rows, d], [b, h, g, rows] x 2
    },
  });
  return scans.map((scan) => plan.unstack(scan));
};

/**
 * Backward: per block, the probabilities recomputed from the rows' saved statistics, then
 * dV += P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ = scale dS K, dK += scale dS^T Q;
 * dK and dV are carried from block to block, dQ is scanned.
 */
const lowerBackward: CompositeLowering = (context) => {
  const { node, g, loop } = context;
  const [query, key, value, , output, rowMax, rowLogSum, outputGradient] = node.inputs as Tensor[];
  const plan = planBlocks(context);
  const scale = plan.attributes.scale.float;
  const [b, h, groups, , d] = query!.shape;
  const paddedQuery = plan.pad(query!);
  const paddedGradient = plan.pad(outputGradient!);
  const paddedMax = plan.pad(g.unsqueeze(rowMax!, [4])); // [b, h, g, s', 1]
  const paddedLogSum = plan.pad(g.unsqueeze(rowLogSum!, [4]));
  const paddedDelta = plan.pad(g.reduceSum(g.mul(outputGradient!, output!), [4], true)); // rowsum(dO * O), [b, h, g, s', 1]
  const zeros = (like: Tensor) => g.constantOfShape(g.shape(like), 0, like.dtype);
  const { carried, scans } = loop({
    tripCount: plan.blocks,
    carried: [zeros(key!), zeros(value!)],
    scans: [{ dtype: query!.dtype, shape: [b!, h!, groups!, '?rows', d!] }],
    body(body, iteration, [keyGradient, valueGradient]) {
      const queryBlock = plan.block(body, paddedQuery, iteration); // [b, h, g, rows, d]
      const gradientBlock = body.reshape(plan.block(body, paddedGradient, iteration), [0, 0, -1, plan.headDim]); // [b, h, g * rows, d]
      const scores = plan.scores(body, queryBlock, iteration); // [b, h, g, rows, t]
      const shifted = body.sub(scores, plan.block(body, paddedMax, iteration));
      const probabilities = body.exp(body.sub(shifted, plan.block(body, paddedLogSum, iteration))); // as the forward's, [b, h, g, rows, t]
      const merged = plan.merged(body, probabilities); // [b, h, g * rows, t]
      const kvShape = key!.shape;
      const nextValueGradient = body.add(valueGradient!, matmul(body, merged, gradientBlock, 1, 0, 1, kvShape)); // [b, h, t, d]
      const probabilityGradient = matmul(body, gradientBlock, value!, 0, 1, 1, merged.shape); // dO V^T, [b, h, g * rows, t]
      const scoreGradient = plan.merged(
        body,
        body.mul(probabilities, body.sub(body.reshape(probabilityGradient, body.shape(probabilities)), plan.block(body, paddedDelta, iteration))),
      ); // [b, h, g * rows, t]
      const queryGradient = body.reshape(matmul(body, scoreGradient, key!, 0, 0, scale, gradientBlock.shape), [0, 0, plan.groups, -1, plan.headDim]);
      const mergedQuery = body.reshape(queryBlock, [0, 0, -1, plan.headDim]);
      const nextKeyGradient = body.add(keyGradient!, matmul(body, scoreGradient, mergedQuery, 1, 0, scale, kvShape));
      return { carried: [nextKeyGradient, nextValueGradient], scans: [queryGradient] };
    },
  });
  return [plan.unstack(scans[0]!), carried[0]!, carried[1]!];
};

export const blockedAttentionLowerings: Record<string, CompositeLowering> = {
  [BLOCKED_ATTENTION]: lowerForward,
  [BLOCKED_ATTENTION_GRADIENT]: lowerBackward,
};
