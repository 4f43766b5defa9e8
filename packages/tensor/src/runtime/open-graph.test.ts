import { describe, expect, it } from 'vitest';
import ort from 'onnxruntime-node';
import { createHostTensor } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import { weightExternalData } from '../graph/serialize';
import { createRuntime } from './runtime';

/** y = x @ W^T with W [3, 2] bound as a weight, over the caller's array. */
function linearOver(data: Float32Array) {
  const g = createGraphBuilder({ name: 'linear' });
  const x = g.input('x', 'float32', ['batch', 2]);
  const w = g.weight('w', { dtype: 'float32', shape: [3, 2], data });
  g.output(g.matmulTransposed(x, w), 'y');
  return g;
}

describe('openGraph', () => {
  it('binds weights to every session over the same array and reads them in place on the CPU', async () => {
    const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
    const data = new Float32Array([1, 0, 0, 1, 1, 1]);
    const first = await runtime.openGraph(linearOver(data), { name: 'first' });
    const second = await runtime.openGraph(linearOver(data), { name: 'second' });
    expect(first.inputNames).toEqual(['x']);
    const x = createHostTensor('float32', [1, 2], [2, 5]);
    expect(Array.from((await first.run({ x })).y!.data as Float32Array)).toEqual([2, 5, 7]);
    // No copy was taken: both sessions see a change of the array (the documented contract is
    // not to change it; this proves the sessions hold no weights of their own).
    data[4] = 10;
    expect(Array.from((await first.run({ x })).y!.data as Float32Array)).toEqual([2, 5, 25]);
    expect(Array.from((await second.run({ x })).y!.data as Float32Array)).toEqual([2, 5, 25]);
    expect(linearOver(data).summary()).toMatchObject({ weights: 1, weightBytes: 24, initializers: 0 });
    await first.release();
    await second.release();
  });

  it('serialises weights as external initializers for the device path, with the same result', async () => {
    const graph = linearOver(new Float32Array([1, 0, 0, 1, 1, 1]));
    const bytes = graph.toBytes({ weights: 'external' });
    // The model itself holds no weight bytes: ONNX Runtime reads them from externalData.
    expect(bytes.byteLength).toBeLessThan(1000);
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ['cpu'],
      externalData: weightExternalData(graph.weights()),
    });
    expect(session.inputNames).toEqual(['x']);
    const out = await session.run({ x: new ort.Tensor('float32', new Float32Array([2, 5]), [1, 2]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([2, 5, 7]);
    await session.release();
  });
});
