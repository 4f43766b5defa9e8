import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createHostTensor } from '../dtype/dtype';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';
import { checkGradient } from './gradient-check';

// A miniature Qwen3-style decoder layer with the operations the models package composes:
// embedding Gather, RMSNorm, LoRA on the query projection, rotary embedding (Slice/Concat,
// Cos/Sin), grouped-query attention (Expand), causal Where mask, SiLU MLP, tied LM head,
// LogSoftmax + GatherElements for target log-probs.
const hidden = 8;
const heads = 2;
const headDim = 4;
const sequence = 3;
const vocab = 5;

function decoderLoss(g: GraphBuilder, [embed, loraA, loraB]: SymbolicTensor[]): SymbolicTensor {
  const random = createRandom(99);
  const weight = (rows: number, columns: number) =>
    g.constant(createHostTensor('float64', [rows, columns], Array.from({ length: rows * columns }, () => random.normal() * 0.4)));
  const rmsNorm = (x: SymbolicTensor) => g.mul(x, g.reciprocal(g.sqrt(g.add(g.reduceMean(g.mul(x, x), [-1], true), 1e-6))));
  const ids = g.constant(createHostTensor('int64', [1, sequence], [1, 4, 2]));
  const targets = g.constant(createHostTensor('int64', [1, sequence, 1], [4, 2, 0]));

  const x = g.gather(embed!, ids); // [1, s, hidden]
  const normed = rmsNorm(x);
  const lora = g.mul(g.matmul(g.matmul(normed, loraA!), loraB!), 0.5); // scaling alpha / rank
  const q = g.transpose(g.reshape(g.add(g.matmul(normed, weight(hidden, heads * headDim)), lora), [0, 0, heads, headDim]), [0, 2, 1, 3]);
  const k = g.transpose(g.reshape(g.matmul(normed, weight(hidden, headDim)), [0, 0, 1, headDim]), [0, 2, 1, 3]);
  const v = g.transpose(g.reshape(g.matmul(normed, weight(hidden, headDim)), [0, 0, 1, headDim]), [0, 2, 1, 3]);

  const positions = g.cast(g.range(0, sequence, 1), 'float64'); // [s]
  const frequencies = g.constant(createHostTensor('float64', [1, headDim / 2], [1, 0.01]));
  const angles = g.matmul(g.unsqueeze(positions, [1]), frequencies); // [s, d/2]
  const full = g.concat([angles, angles], -1); // [s, d]
  const rotate = (t: SymbolicTensor) => {
    const first = g.slice(t, { starts: [0], ends: [headDim / 2], axes: [-1] });
    const second = g.slice(t, { starts: [headDim / 2], ends: [headDim], axes: [-1] });
    return g.add(g.mul(t, g.cos(full)), g.mul(g.concat([g.neg(second), first], -1), g.sin(full)));
  };
  const keys = g.expand(rotate(k), [1, heads, 1, 1]); // grouped-query: 1 kv head for 2 query heads
  const values = g.expand(v, [1, heads, 1, 1]);
  const scores = g.div(g.matmul(rotate(q), g.transpose(keys, [0, 1, 3, 2])), Math.sqrt(headDim));
  const index = g.range(0, sequence, 1);
  const future = g.greater(g.unsqueeze(index, [0]), g.unsqueeze(index, [1]));
  const attention = g.matmul(g.softmax(g.where(future, -1e9, scores)), values); // [1, h, s, d]
  const merged = g.reshape(g.transpose(attention, [0, 2, 1, 3]), [0, 0, heads * headDim]);
  const residual = g.add(x, g.matmul(merged, weight(heads * headDim, hidden)));
  const gate = g.matmul(rmsNorm(residual), weight(hidden, 6));
  const mlp = g.matmul(g.mul(g.mul(gate, g.sigmoid(gate)), g.matmul(rmsNorm(residual), weight(hidden, 6))), weight(6, hidden));
  const logits = g.matmul(rmsNorm(g.add(residual, mlp)), g.transpose(embed!, [1, 0])); // tied head [1, s, vocab]
  const picked = g.gatherElements(g.logSoftmax(logits), targets, 2); // [1, s, 1]
  return g.neg(g.reduceMean(picked, [0, 1, 2]));
}

describe('a Qwen3-style decoder layer', () => {
  it('has gradients for LoRA factors and the tied embedding that match finite differences', async () => {
    const result = await checkGradient(createRuntime({ device: 'cpu', intraOpThreads: 1 }), {
      dtype: 'float64',
      inputs: { embed: { shape: [vocab, hidden] }, loraA: { shape: [hidden, 2] }, loraB: { shape: [2, heads * headDim] } },
      build: (g, inputs) => decoderLoss(g, inputs),
    });
    expect(result.worstError).toBeLessThanOrEqual(1);
    // The check is not vacuous: every factor gets a non-zero gradient.
    for (const name of ['embed', 'loraA', 'loraB']) expect(result.analytic[name]!.some((value) => Math.abs(value) > 1e-4)).toBe(true);
  });
});
