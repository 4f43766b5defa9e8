import { describe, expect, it } from 'vitest';
import { createHostTensor, type HostTensor } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import { buildSharedWeightsModel } from '../graph/shared-weights-model';
import { createRuntime } from './runtime';
import type { TensorRuntime } from './runtime-types';

const weight = new Float32Array([1, 0, 0, 1, 1, -1]);
const bias = new Float32Array([0.5, -3, 0]);

/** y = x @ W^T. */
function projection() {
  const g = createGraphBuilder({ name: 'projection' });
  const x = g.input('x', 'float32', ['batch', 2]);
  g.output(g.matmulTransposed(x, g.weight('w', { dtype: 'float32', shape: [3, 2], data: weight })), 'y');
  return g;
}

/** z = relu(x @ W^T + b), s = sum(z): the same weight, one more, the same input. */
function activation() {
  const g = createGraphBuilder({ name: 'activation' });
  const x = g.input('x', 'float32', ['batch', 2]);
  const w = g.weight('w', { dtype: 'float32', shape: [3, 2], data: weight });
  const z = g.max(g.add(g.matmulTransposed(x, w), g.weight('b', { dtype: 'float32', shape: [3], data: bias })), 0);
  g.output(z, 'z');
  g.output(g.reduceSum(z, [0, 1], false), 's');
  return g;
}

/** y = rows of W picked by index: an output name another graph has too, an input of its own. */
function lookup() {
  const g = createGraphBuilder({ name: 'lookup' });
  const rows = g.input('rows', 'int64', [2]);
  g.output(g.gather(g.weight('w', { dtype: 'float32', shape: [3, 2], data: weight }), rows, 0), 'y');
  return g;
}

const values = (tensor: HostTensor | undefined) => Array.from(tensor!.data as Float32Array);
const x = createHostTensor('float32', [2, 2], [2, 5, -1, 1]);
const rows = createHostTensor('int64', [2], [2n, 0n]);

async function runAll(runtime: TensorRuntime) {
  const first = await runtime.openGraph(projection(), { name: 'projection' });
  const before = values((await first.run({ x })).y);
  const second = await runtime.openGraph(activation(), { name: 'activation' });
  const third = await runtime.openGraph(lookup(), { name: 'lookup' });
  const results = {
    before,
    y: values((await first.run({ x })).y),
    z: values((await second.run({ x })).z),
    s: values((await second.run({ x }, ['s'])).s),
    rows: values((await third.run({ rows })).y),
    inputs: [first.inputNames, second.inputNames, third.inputNames],
    outputs: [first.outputNames, second.outputNames, third.outputNames],
  };
  for (const session of [first, second, third]) await session.release();
  return results;
}

describe("weightPlacement 'shared': graphs over the same weights served by one session", () => {
  it('gives each graph the results of its own session, before and after other graphs join', async () => {
    const fed = await runAll(createRuntime({ device: 'cpu', intraOpThreads: 1 }));
    const shared = await runAll(createRuntime({ device: 'cpu', intraOpThreads: 1, weightPlacement: 'shared' }));
    expect(fed).toEqual({
      before: [2, 5, -3, -1, 1, -2],
      y: [2, 5, -3, -1, 1, -2],
      z: [2.5, 2, 0, 0, 0, 0],
      s: [4.5],
      rows: [1, -1, 1, 0],
      inputs: [['x'], ['x'], ['rows']],
      outputs: [['y'], ['z', 's'], ['y']],
    });
    expect(shared).toEqual(fed);
  });

  it('holds each weight once, as initializers of one model whose graphs are If branches', () => {
    const model = buildSharedWeightsModel([projection(), activation(), lookup()]);
    expect(model.externalData.map((entry) => entry.data.byteLength)).toEqual([24, 12]);
    expect(model.inputs.map((input) => input.name)).toEqual(['x', 'rows']);
    expect(model.graphs).toEqual([
      { inputs: ['x'], outputs: ['y'], modelOutputs: ['g0/y'] },
      { inputs: ['x'], outputs: ['z', 's'], modelOutputs: ['z', 's'] },
      { inputs: ['rows'], outputs: ['y'], modelOutputs: ['g2/y'] },
    ]);
    expect(model.branches).toBe(true);
    // A single graph is the model as it is, with no If around it.
    const single = buildSharedWeightsModel([projection()]);
    expect(single).toMatchObject({ branches: false, graphs: [{ inputs: ['x'], outputs: ['y'], modelOutputs: ['y'] }] });
    expect(single.bytes).toEqual(projection().toBytes({ weights: 'external' }));
  });

  it('keeps serving the others when a joining graph cannot be opened, and releases the copy with the last session', async () => {
    const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1, weightPlacement: 'shared' });
    const first = await runtime.openGraph(projection(), { name: 'projection' });
    const broken = createGraphBuilder({ name: 'broken' });
    const [out] = broken.op('NoSuchOperator', [broken.weight('w', { dtype: 'float32', shape: [3, 2], data: weight })], { outputs: [{ dtype: 'float32', shape: [3, 2] }] });
    broken.output(out!, 'out');
    await expect(runtime.openGraph(broken, { name: 'broken' })).rejects.toThrow(/could not create session "broken \(weights shared by 2 graphs\)" on cpu: .*NoSuchOperator/);
    expect(values((await first.run({ x })).y)).toEqual([2, 5, -3, -1, 1, -2]);
    expect(runtime.sharedWeightCopies()).toEqual([{ sessions: ['projection'], bytes: 24 }]);
    await first.release();
    expect(runtime.sharedWeightCopies()).toEqual([]);
  });

  it('finishes runs in flight while a graph joins, and runs issued meanwhile wait for the rebuilt session', async () => {
    const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1, weightPlacement: 'shared' });
    const first = await runtime.openGraph(projection(), { name: 'projection' });
    const inFlight = first.run({ x });
    const joining = runtime.openGraph(activation(), { name: 'activation' });
    const meanwhile = first.run({ x });
    const [during, second, after] = await Promise.all([inFlight, joining, meanwhile]);
    expect(values(during.y)).toEqual([2, 5, -3, -1, 1, -2]);
    expect(values(after.y)).toEqual([2, 5, -3, -1, 1, -2]);
    expect(values((await second.run({ x }, ['s'])).s)).toEqual([4.5]);
    expect(runtime.sharedWeightCopies()).toEqual([{ sessions: ['projection', 'activation'], bytes: 36 }]);
    await Promise.all([first.release(), second.release()]);
  });

  it('refuses graphs that bind one weight name to two arrays, naming it', () => {
    const other = createGraphBuilder({ name: 'other' });
    other.output(other.reduceSum(other.weight('w', { dtype: 'float32', shape: [3, 2], data: new Float32Array(6) }), [0, 1], false), 'total');
    expect(() => buildSharedWeightsModel([projection(), other])).toThrow(/binds weight "w" to another array/);
  });
});
