import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createHostTensor } from '../dtype/dtype';
import { createRuntime } from '../runtime/runtime';
import { createGraphBuilder } from './graph-builder';

const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

describe('graph builder shape inference', () => {
  it('infers transformer shapes with symbolic batch and sequence', () => {
    const g = createGraphBuilder();
    const ids = g.input('ids', 'int64', ['batch', 'sequence']);
    const table = g.input('embed', 'float32', [100, 16]);
    const hidden = g.gather(table, ids); // [batch, sequence, 16]
    expect(hidden.shape).toEqual(['batch', 'sequence', 16]);
    const heads = g.transpose(g.reshape(hidden, [0, 0, 4, 4]), [0, 2, 1, 3]);
    expect(heads.shape).toEqual(['batch', 4, 'sequence', 4]);
    const kv = g.unsqueeze(g.slice(heads, { starts: [0], ends: [2], axes: [1] }), [2]); // [batch, 2, 1, sequence, 4]
    expect(g.expand(kv, [1, 1, 2, 1, 1]).shape).toEqual(['batch', 2, 2, 'sequence', 4]);
    const scores = g.matmul(heads, g.transpose(heads, [0, 1, 3, 2]));
    expect(scores.shape).toEqual(['batch', 4, 'sequence', 'sequence']);
    expect(g.reduceMean(scores, [-1], true).shape).toEqual(['batch', 4, 'sequence', 1]);
    const past = g.input('past', 'float32', ['batch', 4, 'past', 4]);
    expect(g.concat([past, heads], 2).shape[2]).toMatch(/^\?/);
    expect(g.split(heads, [1, 3], -1).map((part) => part.shape)).toEqual([
      ['batch', 4, 'sequence', 1],
      ['batch', 4, 'sequence', 3],
    ]);
  });

  it('reports mismatches at the call that caused them', () => {
    const g = createGraphBuilder();
    const a = g.input('a', 'float32', [2, 3]);
    const b = g.input('b', 'float32', [4, 5]);
    expect(() => g.add(a, b)).toThrow(/do not broadcast/);
    expect(() => g.matmul(a, b)).toThrow(/inner dimensions differ/);
    expect(() => g.reshape(a, [4, 2])).toThrow(/cannot reshape/);
    expect(() => g.softmax(a, 2)).toThrow(/axis 2 is out of range/);
    expect(() => g.input('a', 'float32', [1])).toThrow(/already has a tensor named "a"/);
    expect(() => g.add(a, g.input('i', 'int64', [3]))).toThrow(/different dtypes/);
    try {
      g.add(a, b);
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'SHAPE_MISMATCH')).toBe(true);
    }
    const other = createGraphBuilder().input('z', 'float32', [1]);
    expect(() => g.add(a, other)).toThrow(/not a tensor of graph/);
  });
});

describe('graph builder forward values on ONNX Runtime', () => {
  it('computes rotary halves, masking, target log-probs and argmax as numpy would', async () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [1, 4]);
    const [first, second] = g.split(x, [2, 2], -1);
    const rotated = g.concat([g.neg(second!), first!], -1); // rotate_half
    g.output(rotated, 'rotated');
    g.output(g.where(g.less(x, 2.5), x, -1), 'masked');
    const logits = g.input('logits', 'float32', [1, 2, 3]);
    const targets = g.input('targets', 'int64', [1, 2, 1]);
    g.output(g.squeeze(g.gatherElements(g.logSoftmax(logits), targets, 2), [2]), 'picked');
    g.output(g.argMax(logits, -1), 'argmax');
    g.output(g.clip(g.pow(x, 2), undefined, 9), 'clipped');
    g.output(g.reduceMax(g.slice(x, { starts: [3], ends: [0], axes: [1], steps: [-1] }), [1]), 'reversedMax');
    const session = await runtime.createSession(g.toBytes());
    const out = await session.run({
      x: createHostTensor('float32', [1, 4], [1, 2, 3, 4]),
      logits: createHostTensor('float32', [1, 2, 3], [0, 0, 0, 1, 2, 3]),
      targets: createHostTensor('int64', [1, 2, 1], [2, 0]),
    });
    expect(Array.from(out.rotated!.data as Float32Array)).toEqual([-3, -4, 1, 2]);
    expect(Array.from(out.masked!.data as Float32Array)).toEqual([1, 2, -1, -1]);
    const picked = Array.from(out.picked!.data as Float32Array);
    expect(picked[0]).toBeCloseTo(-Math.log(3), 5);
    expect(picked[1]).toBeCloseTo(1 - Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3)), 5);
    expect(Array.from(out.argmax!.data as BigInt64Array)).toEqual([0n, 2n]);
    expect(Array.from(out.clipped!.data as Float32Array)).toEqual([1, 4, 9, 9]);
    expect(Array.from(out.reversedMax!.data as Float32Array)).toEqual([4]);
  });

  it('serialises symbolic dimensions so one session serves any batch size', async () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', ['batch', 'sequence']);
    g.output(g.reduceSum(x, [1]), 'rowSums');
    const session = await runtime.createSession(g.toBytes());
    for (const [batch, sequence] of [[1, 3], [4, 2]] as const) {
      const out = await session.run({ x: createHostTensor('float32', [batch, sequence], Array(batch * sequence).fill(1)) });
      expect(out.rowSums!.shape).toEqual([batch]);
      expect(Array.from(out.rowSums!.data as Float32Array)).toEqual(Array(batch).fill(sequence));
    }
  });
});
