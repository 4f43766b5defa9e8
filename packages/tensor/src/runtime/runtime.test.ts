import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostTensor, float32ToBfloat16Array } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import { createRuntime } from './runtime';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-runtime-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function affineModel() {
  const g = createGraphBuilder({ name: 'affine' });
  const x = g.input('x', 'float32', ['batch', 2]);
  // A bfloat16 weight, as Hugging Face checkpoints ship them: converted to float32 on load.
  const w = g.initializer('w', { dtype: 'bfloat16', shape: [2, 2], data: float32ToBfloat16Array([1, 2, 3, 4]) });
  g.output(g.matmul(x, w), 'y');
  return g;
}

describe('runtime', () => {
  it('runs named feeds and fetches from typed arrays, reusing one session', async () => {
    const session = await createRuntime({ device: 'cpu', intraOpThreads: 1, interOpThreads: 1 }).createSession(affineModel().toBytes());
    expect(session.device).toBe('cpu');
    expect(session.inputNames).toEqual(['x']);
    for (const scale of [1, 2]) {
      const out = await session.run({ x: createHostTensor('float32', [1, 2], [scale, 0]) }, ['y']);
      expect(out.y!.shape).toEqual([1, 2]);
      expect(Array.from(out.y!.data as Float32Array)).toEqual([scale * 1, scale * 2]);
    }
    // bfloat16 feeds are converted to float32 too.
    const out = await session.run({ x: { dtype: 'bfloat16', shape: [1, 2], data: float32ToBfloat16Array([0, 1]) } });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([3, 4]);
    await session.release();
  });

  it('runs with intra-op spinning off, the same values as with it on', async () => {
    const feeds = { x: createHostTensor('float32', [2, 2], [1, -2, 0.5, 3]) };
    const values = [];
    for (const intraOpSpinning of [true, false]) {
      const session = await createRuntime({ device: 'cpu', intraOpThreads: 2, intraOpSpinning }).createSession(affineModel().toBytes());
      values.push(Array.from((await session.run(feeds, ['y'])).y!.data as Float32Array));
      await session.release();
    }
    expect(values[1]).toEqual([-5, -6, 9.5, 13]); // [1, -2] and [0.5, 3] times [[1, 2], [3, 4]]
    expect(values[0]).toEqual(values[1]);
  });

  it('names missing feeds and unknown fetches', async () => {
    const session = await createRuntime({ device: 'cpu' }).createSession(affineModel().toBytes(), { name: 'affine' });
    await expect(session.run({}, ['y'])).rejects.toThrow(/missing feeds \["x"\]/);
    await expect(session.run({ x: createHostTensor('float32', [1, 2]) }, ['z'])).rejects.toSatisfy(
      (error) => AgentFlowError.hasCode(error, 'INVALID_ARGUMENT') && /unknown fetches \["z"\]/.test((error as Error).message),
    );
    await expect(session.run({ x: createHostTensor('float32', [1, 3]) })).rejects.toSatisfy((error) =>
      AgentFlowError.hasCode(error, 'RUNTIME_ERROR'),
    );
  });

  it("device 'cuda' without a CUDA provider throws DEVICE_UNAVAILABLE", async () => {
    const runtime = createRuntime({ device: 'cuda', logger: { warn: () => undefined } });
    await expect(runtime.createSession(affineModel().toBytes())).rejects.toSatisfy(
      (error) => AgentFlowError.hasCode(error, 'DEVICE_UNAVAILABLE') && /CUDA/.test((error as Error).message),
    );
  });

  it("device 'auto' falls back to the CPU with exactly one log line for all sessions", async () => {
    const lines: string[] = [];
    const runtime = createRuntime({ device: 'auto', logger: { warn: (line) => lines.push(line) } });
    const [first, second] = await Promise.all([
      runtime.createSession(affineModel().toBytes()),
      runtime.createSession(affineModel().toBytes()),
    ]);
    const third = await runtime.createSession(affineModel().toBytes());
    expect([first.device, second.device, third.device, runtime.device]).toEqual(['cpu', 'cpu', 'cpu', 'cpu']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/CUDA unavailable.*running on CPU/);
    const out = await third.run({ x: createHostTensor('float32', [1, 2], [1, 1]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([4, 6]);
  });

  it('loads a model saved with ONNX external data from its path', async () => {
    const path = join(directory, 'model.onnx');
    await affineModel().save(path, { externalData: true });
    expect(statSync(`${path}.data`).size).toBe(16);
    const session = await createRuntime({ device: 'cpu' }).createSession(path);
    const out = await session.run({ x: createHostTensor('float32', [2, 2], [1, 0, 0, 1]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([1, 2, 3, 4]);
  });
});
