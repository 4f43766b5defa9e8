import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import { type HostTensor, dtypeByteSize, shapeSize } from '../dtype/dtype';
import { safetensorsDtypeName } from './safetensors-format';
import { writeAllBytes } from './write-chunks';

/**
 * Writes tensors to a safetensors file: 8-byte little-endian header length, a JSON header
 * (space-padded to a multiple of 8 bytes, as the reference writer does) with `__metadata__`
 * when given, then the tensors' bytes back to back in name order. Writes to a temporary
 * file and renames, so a crash never leaves a half-written checkpoint.
 */
export async function writeSafetensors(
  path: string,
  tensors: Readonly<Record<string, HostTensor>>,
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== 'string') {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `safetensors metadata values must be strings; ${describeValue(key)} is ${describeValue(value)}.`,
          details: { key },
        });
      }
    }
    header.__metadata__ = metadata;
  }
  let offset = 0;
  for (const name of names) {
    const tensor = tensors[name]!;
    const expected = shapeSize(tensor.shape) * dtypeByteSize(tensor.dtype);
    if (tensor.data.byteLength !== expected) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Tensor ${describeValue(name)} has shape ${describeValue(tensor.shape)} (${expected} bytes of ${tensor.dtype}) but ${tensor.data.byteLength} bytes of data.`,
        details: { name, shape: tensor.shape, dtype: tensor.dtype },
      });
    }
    header[name] = { dtype: safetensorsDtypeName(tensor.dtype), shape: tensor.shape, data_offsets: [offset, offset + expected] };
    offset += expected;
  }
  let json = JSON.stringify(header);
  const jsonBytes = Buffer.byteLength(json, 'utf8');
  json += ' '.repeat((8 - ((8 + jsonBytes) % 8)) % 8);
  const headerBuffer = Buffer.from(json, 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(headerBuffer.length), 0);
  await mkdir(dirname(path), { recursive: true });
  const temporaryPath = `${path}.tmp-${process.pid}`;
  const handle = await open(temporaryPath, 'w');
  try {
    await writeAllBytes(handle, prefix, 0);
    await writeAllBytes(handle, headerBuffer, 8);
    let position = 8 + headerBuffer.length;
    for (const name of names) {
      const data = tensors[name]!.data;
      await writeAllBytes(handle, new Uint8Array(data.buffer, data.byteOffset, data.byteLength), position);
      position += data.byteLength;
    }
    await handle.sync();
  } catch (error) {
    // A failed write (a full disk among others) leaves the previous file, and no partial one.
    await handle.close();
    await rm(temporaryPath, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporaryPath, path);
}
