import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createHostTensor, type HostTensor } from '../dtype/dtype';
import { expectClose } from '../graph/expect-close.test-helper';
import { createGraphBuilder } from '../graph/graph-builder';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';

// Blocked attention against the unblocked formula it replaces (softmax(scale q.k + mask) v with
// the whole [sequence, total] score matrix), values and gradients, on ONNX Runtime.
const [kvHeads, groups, headDim] = [2, 2, 4];
const scale = headDim ** -0.5;

/** The unblocked formula, as the decoder graph wrote it before blocks. */
function unblocked(g: GraphBuilder, q: SymbolicTensor, k: SymbolicTensor, v: SymbolicTensor, mask: SymbolicTensor): SymbolicTensor {
  const total = g.reshape(g.shape(mask, 1, 2), []);
  const sequence = g.reshape(g.shape(q, 3, 4), []);
  const keyIndex = g.range(0, total, 1, 'int64');
  const queryIndex = g.range(g.sub(total, sequence), total, 1, 'int64');
  const causal = g.not(g.greater(g.unsqueeze(keyIndex, [0]), g.unsqueeze(queryIndex, [1])));
  const visible = g.cast(g.and(g.cast(g.unsqueeze(mask, [1, 2, 3]), 'bool'), causal), 'float32');
  const bias = g.mul(g.sub(visible, 1), 1e9);
  const scores = g.matmul(q, g.transpose(g.unsqueeze(k, [2]), [0, 1, 2, 4, 3]));
  return g.matmul(g.softmax(g.add(g.mul(scores, scale), bias), -1), g.unsqueeze(v, [2]));
}

interface Case {
  batch: number;
  sequence: number;
  past: number;
  blockSize: number;
  /** Padding per row: left (generation) or right (scoring) zeros of the key mask. */
  padding: { side: 'left' | 'right'; count: number }[];
}

async function compare({ batch, sequence, past, blockSize, padding }: Case) {
  const total = past + sequence;
  const g = createGraphBuilder({ name: 'blocked-attention-test' });
  const q = g.input('q', 'float32', ['batch', kvHeads, groups, 'sequence', headDim]);
  const k = g.input('k', 'float32', ['batch', kvHeads, 'total', headDim]);
  const v = g.input('v', 'float32', ['batch', kvHeads, 'total', headDim]);
  const mask = g.input('mask', 'int64', ['batch', 'total']);
  const seed = g.input('seed', 'float32', ['batch', kvHeads, groups, 'sequence', headDim]);
  const outputs: Record<string, SymbolicTensor> = {
    blocked: g.blockedAttention(q, k, v, { blockSize, scale, causal: true, keyMask: mask }),
    reference: unblocked(g, q, k, v, mask),
  };
  for (const [name, out] of Object.entries(outputs)) {
    g.output(out, name);
    const [dq, dk, dv] = g.gradients(g.reduceSum(g.mul(out, seed), [0, 1, 2, 3, 4]), [q, k, v]);
    g.output(dq!, `${name}.dq`);
    g.output(dk!, `${name}.dk`);
    g.output(dv!, `${name}.dv`);
  }
  const random = createRandom(7);
  const tensor = (shape: number[]) => createHostTensor('float32', shape, Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random.normal()));
  const maskValues = padding.flatMap(({ side, count }) =>
    Array.from({ length: total }, (_, index) => ((side === 'left' ? index < count : index >= total - count) ? 0 : 1)),
  );
  const feeds: Record<string, HostTensor> = {
    q: tensor([batch, kvHeads, groups, sequence, headDim]),
    k: tensor([batch, kvHeads, total, headDim]),
    v: tensor([batch, kvHeads, total, headDim]),
    mask: createHostTensor('int64', [batch, total], maskValues),
    seed: tensor([batch, kvHeads, groups, sequence, headDim]),
  };
  const session = await createRuntime({ device: 'cpu', intraOpThreads: 1 }).createSession(g.toBytes());
  const result = await session.run(feeds);
  await session.release();
  return result;
}

describe('blockedAttention', () => {
  it.each([
    { name: 'blocks that do not divide the sequence, right padding', batch: 2, sequence: 7, past: 0, blockSize: 3, padding: [{ side: 'right', count: 0 }, { side: 'right', count: 2 }] },
    { name: 'left padding with fully masked rows, and a past', batch: 2, sequence: 5, past: 3, blockSize: 2, padding: [{ side: 'left', count: 5 }, { side: 'left', count: 0 }] },
    { name: 'a sequence shorter than one block', batch: 1, sequence: 3, past: 0, blockSize: 8, padding: [{ side: 'right', count: 1 }] },
    { name: 'one row at a time (decoding)', batch: 1, sequence: 1, past: 6, blockSize: 4, padding: [{ side: 'left', count: 2 }] },
  ] as (Case & { name: string })[])('matches unblocked attention and its gradients: $name', async (testCase) => {
    const result = await compare(testCase);
    expectClose(result.blocked!, result.reference!, 1e-5);
    for (const part of ['dq', 'dk', 'dv']) expectClose(result[`blocked.${part}`]!, result[`reference.${part}`]!, 1e-4);
  });

  it('refuses a query that is not [batch, kvHeads, groups, sequence, headDim], naming the shape', () => {
    const g = createGraphBuilder();
    const q = g.input('q', 'float32', [1, 2, 'sequence', headDim]);
    const k = g.input('k', 'float32', [1, 2, 'total', headDim]);
    expect(() => g.blockedAttention(q, k, k, { blockSize: 4, scale, causal: true })).toThrow(/rank 5.*\[1,2,"sequence",4\]|\[1,2,"sequence",4\].*rank 5/);
    const q5 = g.input('q5', 'float32', [1, 2, 1, 'sequence', headDim]);
    expect(() => g.blockedAttention(q5, k, k, { blockSize: 0, scale, causal: true })).toThrow(/blockSize must be a positive integer.*0/);
  });
});
