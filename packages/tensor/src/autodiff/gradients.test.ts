import { AgentFlowError } from '@agentflow/core';
import onnxProto from 'onnx-proto';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostTensor } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';
import { type CheckedInput, checkGradient } from './gradient-check';

const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
afterAll(() => undefined);

type Case = {
  name: string;
  inputs: Record<string, CheckedInput>;
  build: (g: GraphBuilder, x: SymbolicTensor[]) => SymbolicTensor;
  outputShape?: number[];
  /** ONNX Runtime's CPU provider lacks a float64 kernel for this case: check in float32. */
  float32?: boolean;
};

const positive: [number, number] = [0.5, 2];
const int64 = (g: GraphBuilder, shape: number[], values: number[]) => g.constant(createHostTensor('int64', shape, values));

const cases: Case[] = [
  { name: 'Add broadcast [2,3] + [3]', inputs: { a: { shape: [2, 3] }, b: { shape: [3] } }, build: (g, [a, b]) => g.add(a!, b!) },
  { name: 'Sub broadcast [2,1] - [1,3]', inputs: { a: { shape: [2, 1] }, b: { shape: [1, 3] } }, build: (g, [a, b]) => g.sub(a!, b!) },
  { name: 'Mul broadcast [2,3,4] * [3,1]', inputs: { a: { shape: [2, 3, 4] }, b: { shape: [3, 1] } }, build: (g, [a, b]) => g.mul(a!, b!) },
  { name: 'Div broadcast [2,3] / [2,1]', inputs: { a: { shape: [2, 3] }, b: { shape: [2, 1], range: positive } }, build: (g, [a, b]) => g.div(a!, b!) },
  { name: 'Pow [2,3] ^ [3]', inputs: { a: { shape: [2, 3], range: positive }, b: { shape: [3] } }, build: (g, [a, b]) => g.pow(a!, b!) },
  { name: 'Min broadcast', inputs: { a: { shape: [2, 3] }, b: { shape: [3] } }, build: (g, [a, b]) => g.min(a!, b!) },
  { name: 'Max broadcast', inputs: { a: { shape: [2, 3] }, b: { shape: [2, 1] } }, build: (g, [a, b]) => g.max(a!, b!) },
  { name: 'Neg', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.neg(x!) },
  { name: 'Sqrt', inputs: { x: { shape: [2, 3], range: positive } }, build: (g, [x]) => g.sqrt(x!) },
  { name: 'Reciprocal', inputs: { x: { shape: [2, 3], range: positive } }, build: (g, [x]) => g.reciprocal(x!) },
  { name: 'Exp', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.exp(x!) },
  { name: 'Log', inputs: { x: { shape: [2, 3], range: positive } }, build: (g, [x]) => g.log(x!) },
  { name: 'Sigmoid', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.sigmoid(x!) },
  { name: 'Tanh', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.tanh(x!) },
  { name: 'Cos', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.cos(x!) },
  { name: 'Sin', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.sin(x!) },
  { name: 'Clip with both bounds', inputs: { x: { shape: [3, 4], range: [-2, 2] } }, build: (g, [x]) => g.clip(x!, -0.7, 0.9) },
  { name: 'Identity', inputs: { x: { shape: [3] } }, build: (g, [x]) => g.identity(x!) },
  { name: 'MatMul [2,3,4] x [4,5]', inputs: { a: { shape: [2, 3, 4] }, b: { shape: [4, 5] } }, build: (g, [a, b]) => g.matmul(a!, b!) },
  {
    name: 'MatMul batch broadcast [2,1,3,4] x [3,4,2]',
    inputs: { a: { shape: [2, 1, 3, 4] }, b: { shape: [3, 4, 2] } },
    build: (g, [a, b]) => g.matmul(a!, b!),
  },
  {
    // FusedMatMul has float32 kernels only.
    name: 'matmulTransposed [2,3,4] x [5,4]^T (float32 check)',
    inputs: { a: { shape: [2, 3, 4] }, b: { shape: [5, 4] } },
    build: (g, [a, b]) => g.matmulTransposed(a!, b!),
    float32: true,
  },
  {
    name: 'matmulTransposed batch broadcast [2,1,3,4] x [3,2,4]^T (float32 check)',
    inputs: { a: { shape: [2, 1, 3, 4] }, b: { shape: [3, 2, 4] } },
    build: (g, [a, b]) => g.matmulTransposed(a!, b!),
    float32: true,
  },
  { name: 'Softmax last axis', inputs: { x: { shape: [2, 5] } }, build: (g, [x]) => g.softmax(x!) },
  { name: 'Softmax axis 0', inputs: { x: { shape: [3, 2] } }, build: (g, [x]) => g.softmax(x!, 0) },
  { name: 'LogSoftmax last axis', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.logSoftmax(x!) },
  { name: 'ReduceSum axis 1', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.reduceSum(x!, [1]) },
  { name: 'ReduceSum axes [0,2] keepDims', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.reduceSum(x!, [0, -1], true) },
  { name: 'ReduceMean axis -1', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.reduceMean(x!, [-1]) },
  { name: 'ReduceMax axis 1 keepDims', inputs: { x: { shape: [2, 5, 3] } }, build: (g, [x]) => g.reduceMax(x!, [1], true) },
  {
    name: 'Gather axis 0 (embedding, repeated ids)',
    inputs: { table: { shape: [5, 3] } },
    build: (g, [table]) => g.gather(table!, int64(g, [2, 3], [1, 4, 1, 0, 1, 4])),
  },
  {
    name: 'Gather axis 1',
    inputs: { x: { shape: [2, 4, 3] } },
    build: (g, [x]) => g.gather(x!, int64(g, [3], [3, 0, 3]), 1),
  },
  {
    name: 'GatherElements axis 2 (target log-probs)',
    inputs: { x: { shape: [2, 3, 5] } },
    build: (g, [x]) => g.gatherElements(g.logSoftmax(x!), int64(g, [2, 3, 1], [0, 4, 2, 2, 1, 3]), 2),
  },
  { name: 'Reshape with 0 and -1', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.mul(g.reshape(x!, [0, -1]), 2) },
  { name: 'Transpose', inputs: { x: { shape: [2, 3, 4] } }, build: (g, [x]) => g.transpose(x!, [2, 0, 1]) },
  { name: 'Unsqueeze', inputs: { x: { shape: [2, 3] } }, build: (g, [x]) => g.unsqueeze(x!, [0, 2]) },
  { name: 'Squeeze', inputs: { x: { shape: [2, 1, 3] } }, build: (g, [x]) => g.squeeze(x!, [1]) },
  { name: 'Concat axis 1', inputs: { a: { shape: [2, 3] }, b: { shape: [2, 2] } }, build: (g, [a, b]) => g.concat([a!, b!, a!], 1) },
  {
    name: 'Slice with negative start and step 2',
    inputs: { x: { shape: [3, 6] } },
    build: (g, [x]) => g.slice(x!, { starts: [1, -5], ends: [3, 6], axes: [0, 1], steps: [1, 2] }),
  },
  {
    name: 'Slice contiguous halves (rotary), gradient by Pad',
    inputs: { x: { shape: [2, 6] } },
    build: (g, [x]) => g.mul(g.slice(x!, { starts: [3], ends: [6], axes: [-1] }), g.slice(x!, { starts: [0], ends: [3], axes: [1] })),
  },
  {
    name: 'Slice over a symbolic dimension to the end and to -1',
    inputs: { x: { shape: [3, 4], declared: ['rows', 4] } },
    build: (g, [x]) => g.slice(x!, { starts: [1, 0], ends: [Number.MAX_SAFE_INTEGER, -1], axes: [0, 1] }),
    outputShape: [2, 3],
  },
  {
    name: 'Split, one piece unused',
    inputs: { x: { shape: [2, 5] } },
    build: (g, [x]) => {
      const [first, , third] = g.split(x!, [2, 1, 2], 1);
      return g.mul(first!, third!);
    },
  },
  { name: 'Expand [3,1] -> [2,3,4]', inputs: { x: { shape: [3, 1] } }, build: (g, [x]) => g.expand(x!, [2, 3, 4]) },
  {
    name: 'Where with broadcast mask',
    inputs: { a: { shape: [2, 3] }, b: { shape: [3] } },
    build: (g, [a, b]) => g.where(g.greater(a!, 0), a!, b!),
  },
  {
    // Rounding to float32 is a staircase at float64 resolution, so this one is checked in float32.
    name: 'Cast float32 -> float64 -> float32 (float32 check)',
    inputs: { x: { shape: [2, 3] } },
    build: (g, [x]) => {
      const wide = g.cast(x!, 'float64');
      return g.cast(g.mul(wide, wide), 'float32');
    },
    float32: true,
  },
  { name: 'Fan-out: x*x + exp(x) + x', inputs: { x: { shape: [4] } }, build: (g, [x]) => g.add(g.add(g.mul(x!, x!), g.exp(x!)), x!) },
  {
    name: 'Symbolic broadcast decided at run time',
    inputs: { a: { shape: [2, 3], declared: ['batch', 3] }, b: { shape: [1, 3], declared: ['rows', 3] } },
    build: (g, [a, b]) => g.mul(a!, b!),
    outputShape: [2, 3],
  },
  {
    name: 'Attention block: masked softmax(QK^T/sqrt(d)) V with grouped-query Expand',
    inputs: { q: { shape: [1, 2, 3, 4] }, k: { shape: [1, 1, 1, 3, 4] }, v: { shape: [1, 1, 1, 3, 4] } },
    build: (g, [q, k, v]) => {
      const keys = g.reshape(g.expand(k!, [1, 1, 2, 1, 1]), [1, 2, 3, 4]); // [b, heads, s, d]
      const values = g.reshape(g.expand(v!, [1, 1, 2, 1, 1]), [1, 2, 3, 4]);
      const scores = g.div(g.matmul(q!, g.transpose(keys, [0, 1, 3, 2])), Math.sqrt(4)); // [b, h, s, s]
      const positions = g.range(0, 3, 1);
      const causal = g.less(g.unsqueeze(positions, [1]), g.unsqueeze(positions, [0])); // [s, s] future
      const masked = g.where(causal, -1e9, scores);
      return g.matmul(g.softmax(masked), values);
    },
  },
];

describe('gradients match central finite differences', () => {
  it.each(cases)('$name', async (testCase) => {
    const result = await checkGradient(runtime, {
      dtype: testCase.float32 ? 'float32' : 'float64',
      inputs: testCase.inputs,
      build: testCase.build,
      ...(testCase.outputShape ? { outputShape: testCase.outputShape } : {}),
    });
    if (result.worstError > 1) console.log(testCase.name, result);
    expect(result.worstError).toBeLessThanOrEqual(1);
  });
});

describe('gradient graph construction', () => {
  it('names an operator without a gradient rule', () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [3]);
    const [y] = g.op('Softsign', [x]);
    const loss = g.reduceSum(y!, [0]);
    expect(() => g.gradients(loss, [x])).toThrow(/Softsign/);
    try {
      g.gradients(loss, [x]);
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'UNSUPPORTED_OPERATOR')).toBe(true);
    }
  });

  it('adds no gradient nodes for tensors that need none', () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', ['batch', 8]);
    const w = g.input('w', 'float32', [8, 4]);
    const loss = g.reduceSum(g.matmul(g.tanh(x), w), [0, 1]);
    const before = g.summary().nodes;
    g.gradients(loss, [w]);
    const model = onnxProto.onnx.ModelProto.decode(g.toBytes());
    const count = (opType: string) => (model.graph?.node ?? []).filter((node) => node.opType === opType).length;
    // Only dW = tanh(x)^T @ dY: one Gemm, and nothing flows back into x's Tanh.
    expect(count('MatMul')).toBe(1);
    expect(count('Gemm')).toBe(1);
    expect(count('Tanh')).toBe(1);
    expect(g.summary().nodes - before).toBeLessThan(12);
  });

  it("takes a weight's gradient over every row of a batch as one Gemm, not per-row products summed", () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', ['batch', 'sequence', 8]);
    const w = g.input('w', 'float32', [4, 8]);
    const v = g.input('v', 'float32', [4, 3]);
    const loss = g.reduceSum(g.matmul(g.matmulTransposed(x, w), v), [0, 1, 2]);
    const [dW, dV] = g.gradients(loss, [w, v]);
    expect([dW!.shape, dV!.shape]).toEqual([
      [4, 8],
      [4, 3],
    ]);
    const model = onnxProto.onnx.ModelProto.decode(g.toBytes());
    const count = (opType: string) => (model.graph?.node ?? []).filter((node) => node.opType === opType).length;
    // [batch, sequence, ...] rows flattened to 2-D: no [batch, 4, 8] products, no sum over the batch, no transposed copy.
    expect(count('Gemm')).toBe(2);
    expect(count('ReduceSum')).toBe(1); // the loss's own
    expect(count('Transpose')).toBe(1); // v^T, for the gradient flowing back into x w^T; none for either weight's
  });

  it('declares embedding-table gradients with the table shape', () => {
    const g = createGraphBuilder();
    const table = g.input('table', 'float32', [50, 8]);
    const ids = g.input('ids', 'int64', ['batch', 'sequence']);
    const [gradient] = g.gradients(g.reduceSum(g.gather(table, ids), [0, 1, 2]), [table]);
    expect(gradient!.shape).toEqual([50, 8]);
  });

  it('undoes a contiguous constant slice with one Pad instead of a scatter', () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', ['batch', 8]);
    g.gradients(g.reduceSum(g.slice(x, { starts: [4], ends: [8], axes: [1] }), [0, 1]), [x]);
    const model = onnxProto.onnx.ModelProto.decode(g.toBytes());
    const types = (model.graph?.node ?? []).map((node) => node.opType);
    expect(types).toContain('Pad');
    expect(types).not.toContain('ScatterElements');
  });

  it('differentiates initializers as well as inputs', async () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', ['batch', 2]);
    const w = g.initializer('w', createHostTensor('float32', [2, 1], [3, -1]));
    const loss = g.reduceSum(g.mul(g.matmul(x, w), g.matmul(x, w)), [0, 1]); // sum((x w)^2)
    const [gradW, gradX] = g.gradients(loss, [w, x]);
    g.output(gradW!, 'grad.w');
    g.output(gradX!, 'grad.x');
    const session = await runtime.createSession(g.toBytes());
    const out = await session.run({ x: createHostTensor('float32', [1, 2], [1, 2]) });
    // y = 3 - 2 = 1; dL/dw = 2 y x^T = [2, 4]; dL/dx = 2 y w^T = [6, -2]
    expect([gradW!.shape, gradX!.shape]).toEqual([[2, 1], ['batch', 2]]);
    expect(Array.from(out['grad.w']!.data as Float32Array)).toEqual([2, 4]);
    expect(Array.from(out['grad.x']!.data as Float32Array)).toEqual([6, -2]);
  });

  it('gives zeros for a tensor the output does not depend on', async () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [2]);
    const unused = g.input('unused', 'float32', [3]);
    const [gradient] = g.gradients(g.reduceSum(g.mul(x, x), [0]), [unused]);
    g.output(gradient!, 'grad');
    g.output(g.identity(x), 'echo');
    const session = await runtime.createSession(g.toBytes());
    const out = await session.run({ x: createHostTensor('float32', [2], [1, 2]), unused: createHostTensor('float32', [3], [4, 5, 6]) });
    expect(Array.from(out.grad!.data as Float32Array)).toEqual([0, 0, 0]);
  });
});
