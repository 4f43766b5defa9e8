// Benchmark graphs shared by tensor-bench.mjs and gpu-check.mjs. Sizes follow Qwen3-0.6B:
// hidden 1024, MLP 3072, 16 query heads and 8 key/value heads of dimension 64.
import { createGraphBuilder } from '../dist/index.js';

export const sizes = { tokens: 256, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 64, layers: 2 };

/** One square MatMul [n, n] x [n, n]: the peak rate reference. */
export function buildPeakMatmul(n) {
  const g = createGraphBuilder({ name: 'peak-matmul' });
  const a = g.input('a', 'float32', [n, n]);
  const b = g.input('b', 'float32', [n, n]);
  g.output(g.matmul(a, b), 'c');
  return { bytes: g.toBytes(), inputs: { a: [n, n], b: [n, n] }, flops: 2 * n ** 3 };
}

/** `layers` x (up [hidden -> intermediate], down [intermediate -> hidden]) MatMuls over `tokens` rows. */
export function buildMatmulStack(withBackward) {
  const { tokens, hidden, intermediate, layers } = sizes;
  const g = createGraphBuilder({ name: 'matmul-stack' });
  const x = g.input('x', 'float32', [tokens, hidden]);
  const inputs = { x: [tokens, hidden] };
  const weights = [];
  let h = x;
  for (let layer = 0; layer < layers; layer++) {
    const up = g.input(`up${layer}`, 'float32', [hidden, intermediate]);
    const down = g.input(`down${layer}`, 'float32', [intermediate, hidden]);
    inputs[`up${layer}`] = [hidden, intermediate];
    inputs[`down${layer}`] = [intermediate, hidden];
    weights.push(up, down);
    h = g.matmul(g.matmul(h, up), down); // [tokens, hidden]
  }
  const forwardFlops = layers * 2 * 2 * tokens * hidden * intermediate;
  return finish(g, h, [x, ...weights], inputs, forwardFlops, withBackward);
}

/** Causal grouped-query self-attention with q/k/v/o projections. */
export function buildAttention(withBackward) {
  const { tokens, hidden, heads, kvHeads, headDim } = sizes;
  const g = createGraphBuilder({ name: 'attention' });
  const x = g.input('x', 'float32', [1, tokens, hidden]);
  const wq = g.input('wq', 'float32', [hidden, heads * headDim]);
  const wk = g.input('wk', 'float32', [hidden, kvHeads * headDim]);
  const wv = g.input('wv', 'float32', [hidden, kvHeads * headDim]);
  const wo = g.input('wo', 'float32', [heads * headDim, hidden]);
  const inputs = {
    x: [1, tokens, hidden],
    wq: [hidden, heads * headDim],
    wk: [hidden, kvHeads * headDim],
    wv: [hidden, kvHeads * headDim],
    wo: [heads * headDim, hidden],
  };
  const groups = heads / kvHeads;
  const split = (t, count) => g.transpose(g.reshape(t, [0, 0, count, headDim]), [0, 2, 1, 3]); // [1, count, tokens, d]
  const q = split(g.matmul(x, wq), heads);
  const repeat = (t) => g.reshape(g.expand(g.unsqueeze(t, [2]), [1, 1, groups, 1, 1]), [1, heads, tokens, headDim]);
  const k = repeat(split(g.matmul(x, wk), kvHeads));
  const v = repeat(split(g.matmul(x, wv), kvHeads));
  const scores = g.div(g.matmul(q, g.transpose(k, [0, 1, 3, 2])), Math.sqrt(headDim)); // [1, heads, tokens, tokens]
  const positions = g.range(0, tokens, 1);
  const future = g.less(g.unsqueeze(positions, [1]), g.unsqueeze(positions, [0]));
  const probabilities = g.softmax(g.where(future, -1e9, scores));
  const context = g.reshape(g.transpose(g.matmul(probabilities, v), [0, 2, 1, 3]), [0, 0, heads * headDim]);
  const y = g.matmul(context, wo); // [1, tokens, hidden]
  const projections = 2 * tokens * hidden * (2 * heads * headDim + 2 * kvHeads * headDim);
  const attention = 2 * 2 * heads * tokens * tokens * headDim;
  return finish(g, y, [x, wq, wk, wv, wo], inputs, projections + attention, withBackward);
}

function finish(g, y, differentiated, inputs, forwardFlops, withBackward) {
  // A scalar objective; its own cost is negligible.
  const loss = g.reduceMean(g.mul(y, y), [...y.shape.keys()]);
  g.output(loss, 'loss');
  if (withBackward) {
    g.gradients(loss, differentiated).forEach((gradient, index) => {
      g.output(gradient, `grad.${differentiated[index].name}`);
    });
  }
  // Backward costs about twice the forward MatMul work (one product per operand).
  return { bytes: g.toBytes(), inputs, flops: withBackward ? 3 * forwardFlops : forwardFlops };
}

/** Deterministic inputs in [-0.05, 0.05] (a linear congruential sequence). */
export function makeFeeds(inputs) {
  let state = 12345;
  const feeds = {};
  for (const [name, shape] of Object.entries(inputs)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      data[i] = (state / 2 ** 32 - 0.5) * 0.1;
    }
    feeds[name] = { dtype: 'float32', shape, data };
  }
  return feeds;
}
