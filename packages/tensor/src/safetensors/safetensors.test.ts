import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { type HostTensor, type TensorDtype, createHostTensor, tensorDtypes } from '../dtype/dtype';
import { openSafetensors, readSafetensors } from './safetensors-reader';
import { writeSafetensors } from './safetensors-writer';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-safetensors-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function sample(dtype: TensorDtype, shape: number[]): HostTensor {
  const size = shape.reduce((a, b) => a * b, 1);
  const values = Array.from({ length: size }, (_, i) => {
    if (dtype === 'bool') return i % 2;
    if (dtype.startsWith('uint')) return i * 3;
    if (dtype.startsWith('int')) return i * 7 - 20;
    return (i - 3) * 0.375;
  });
  return createHostTensor(dtype, shape, values);
}

describe('safetensors', () => {
  it.each(tensorDtypes)('round-trips a %s tensor bit for bit', async (dtype) => {
    const path = join(directory, `${dtype}.safetensors`);
    const tensor = sample(dtype, [2, 3, 2]);
    await writeSafetensors(path, { weight: tensor, scalar: sample(dtype, []) });
    const { tensors } = await readSafetensors(path);
    expect(tensors.weight!.dtype).toBe(dtype);
    expect(tensors.weight!.shape).toEqual([2, 3, 2]);
    expect(Array.from(tensors.weight!.data as ArrayLike<number>)).toEqual(Array.from(tensor.data as ArrayLike<number>));
    expect(tensors.scalar!.shape).toEqual([]);
  });

  it('writes the standard layout: u64 header length, 8-byte aligned JSON header with __metadata__', async () => {
    const path = join(directory, 'layout.safetensors');
    await writeSafetensors(path, { b: sample('float32', [2]), a: sample('int64', [3]) }, { format: 'pt' });
    const bytes = readFileSync(path);
    const headerLength = Number(bytes.readBigUInt64LE(0));
    expect((8 + headerLength) % 8).toBe(0);
    const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
    expect(header.__metadata__).toEqual({ format: 'pt' });
    expect(header.a).toEqual({ dtype: 'I64', shape: [3], data_offsets: [0, 24] });
    expect(header.b).toEqual({ dtype: 'F32', shape: [2], data_offsets: [24, 32] });
    expect(bytes.length).toBe(8 + headerLength + 32);
  });

  it('reads only the requested tensor from a large file, decoding bf16 to float32 on request', async () => {
    const path = join(directory, 'large.safetensors');
    const big = createHostTensor('bfloat16', [4096, 1024]);
    const small = createHostTensor('bfloat16', [3], [1.5, -2, 0.0078125]);
    await writeSafetensors(path, { 'model.big': big, 'model.small': small }, { note: 'partial read' });
    expect(statSync(path).size).toBeGreaterThan(8_000_000);
    const file = await openSafetensors(path);
    try {
      expect([...file.entries.keys()]).toEqual(['model.big', 'model.small']);
      expect(file.metadata).toEqual({ note: 'partial read' });
      const tensor = await file.read('model.small', { as: 'float32' });
      expect(tensor.dtype).toBe('float32');
      expect(Array.from(tensor.data as Float32Array)).toEqual([1.5, -2, 0.0078125]);
      // The returned buffer holds exactly this tensor, not the file.
      expect(tensor.data.buffer.byteLength).toBe(4 * 3);
      await expect(file.read('model.missing')).rejects.toSatisfy((error) => AgentFlowError.hasCode(error, 'NOT_FOUND'));
    } finally {
      await file.close();
    }
  });

  it('rejects a file whose header lies about its size', async () => {
    const path = join(directory, 'corrupt.safetensors');
    await writeSafetensors(path, { x: sample('float32', [4]) });
    const bytes = readFileSync(path);
    bytes.writeBigUInt64LE(10_000n, 0);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, bytes);
    await expect(openSafetensors(path)).rejects.toSatisfy((error) => AgentFlowError.hasCode(error, 'PARSE_ERROR'));
  });
});
