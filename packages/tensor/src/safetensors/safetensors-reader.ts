import { open } from 'node:fs/promises';
import { AgentFlowError, describeValue } from '@agentflow/core';
import { type HostTensor, allocateTypedArray, dtypeByteSize, shapeSize, toFloat32 } from '../dtype/dtype';
import { type SafetensorsEntry, parseSafetensorsDtype } from './safetensors-format';

/** Settings for {@link SafetensorsFile.read}. */
export interface SafetensorsReadSettings {
  /** 'float32' decodes float16/bfloat16/float64 tensors to float32 on load; 'stored' (default) keeps the file's dtype. */
  as?: 'stored' | 'float32';
}

/** An open safetensors file: the header is parsed, tensor bytes are read only when asked for. */
export interface SafetensorsFile {
  readonly path: string;
  /** Tensor entries by name, in file order. */
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  /** The `__metadata__` string map (empty when absent). */
  readonly metadata: Readonly<Record<string, string>>;
  /** Reads one tensor with a single positioned read of its byte range. */
  read(name: string, settings?: SafetensorsReadSettings): Promise<HostTensor>;
  /** Reads the named tensors (all when omitted). */
  readMany(names?: readonly string[], settings?: SafetensorsReadSettings): Promise<Record<string, HostTensor>>;
  close(): Promise<void>;
}

// Header size guard: the reference implementation refuses headers over 100 MB.
const maxHeaderBytes = 100_000_000;

function corrupt(path: string, what: string, cause?: unknown): AgentFlowError {
  return new AgentFlowError({
    code: 'PARSE_ERROR',
    message: `safetensors file ${path} is not valid: ${what}.`,
    details: { path },
    cause,
  });
}

/**
 * Opens a safetensors file and parses its header, without reading tensor data: files of
 * many GB cost only the header until {@link SafetensorsFile.read} is called.
 */
export async function openSafetensors(path: string): Promise<SafetensorsFile> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `Cannot open safetensors file ${path}.`, cause, details: { path } });
  }
  try {
    const { size: fileSize } = await handle.stat();
    const prefix = Buffer.alloc(8);
    await handle.read(prefix, 0, 8, 0);
    const headerLength = Number(prefix.readBigUInt64LE(0));
    if (fileSize < 8 || headerLength > maxHeaderBytes || 8 + headerLength > fileSize) {
      throw corrupt(path, `header length ${headerLength} does not fit a file of ${fileSize} bytes`);
    }
    const headerBytes = Buffer.alloc(headerLength);
    await handle.read(headerBytes, 0, headerLength, 8);
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(headerBytes.toString('utf8')) as Record<string, unknown>;
    } catch (cause) {
      throw corrupt(path, 'the header is not JSON', cause);
    }
    const dataStart = 8 + headerLength;
    const entries = new Map<string, SafetensorsEntry>();
    let metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(header)) {
      if (name === '__metadata__') {
        metadata = (value ?? {}) as Record<string, string>;
        continue;
      }
      const raw = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
      const dtype = parseSafetensorsDtype(raw.dtype, name, path);
      const shape = raw.shape;
      const offsets = raw.data_offsets;
      if (!Array.isArray(shape) || !shape.every((dim) => Number.isInteger(dim) && dim >= 0)) {
        throw corrupt(path, `tensor ${describeValue(name)} has shape ${describeValue(shape)}`);
      }
      if (!Array.isArray(offsets) || offsets.length !== 2) {
        throw corrupt(path, `tensor ${describeValue(name)} has data_offsets ${describeValue(offsets)}`);
      }
      const [begin, end] = offsets as [number, number];
      const expected = shapeSize(shape as number[]) * dtypeByteSize(dtype);
      if (end - begin !== expected || begin < 0 || dataStart + end > fileSize) {
        throw corrupt(path, `tensor ${describeValue(name)} spans bytes [${begin}, ${end}) but needs ${expected} bytes inside the file`);
      }
      entries.set(name, { name, dtype, shape: shape as number[], dataOffsets: [begin, end] });
    }
    const read = async (name: string, settings: SafetensorsReadSettings = {}): Promise<HostTensor> => {
      const entry = entries.get(name);
      if (entry === undefined) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `safetensors file ${path} has no tensor ${describeValue(name)} (it has ${entries.size} tensors, e.g. ${describeValue([...entries.keys()].slice(0, 5))}).`,
          details: { path, name },
        });
      }
      const [begin, end] = entry.dataOffsets;
      const length = end - begin;
      // A fresh buffer keeps the typed array aligned whatever the file offset is.
      const buffer = new ArrayBuffer(length);
      let done = 0;
      while (done < length) {
        // Positioned reads are capped near 2 GB per call.
        const chunk = Math.min(length - done, 1 << 30);
        const { bytesRead } = await handle.read(new Uint8Array(buffer, done, chunk), 0, chunk, dataStart + begin + done);
        if (bytesRead === 0) throw corrupt(path, `tensor ${describeValue(name)} is truncated`);
        done += bytesRead;
      }
      const tensor: HostTensor = {
        dtype: entry.dtype,
        shape: [...entry.shape],
        data: allocateTypedArray(entry.dtype, shapeSize(entry.shape), buffer, 0),
      };
      return settings.as === 'float32' ? toFloat32(tensor) : tensor;
    };
    return {
      path,
      entries,
      metadata,
      read,
      async readMany(names, settings) {
        const result: Record<string, HostTensor> = {};
        for (const name of names ?? [...entries.keys()]) result[name] = await read(name, settings);
        return result;
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads the named tensors (all when omitted) from a safetensors file, then closes it. */
export async function readSafetensors(
  path: string,
  names?: readonly string[],
  settings?: SafetensorsReadSettings,
): Promise<{ tensors: Record<string, HostTensor>; metadata: Record<string, string> }> {
  const file = await openSafetensors(path);
  try {
    return { tensors: await file.readMany(names, settings), metadata: { ...file.metadata } };
  } finally {
    await file.close();
  }
}
