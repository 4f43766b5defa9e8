import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { AgentFlowError, describeValue, fileKindOf } from '@agentflow/core';
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


function parseMetadata(value: unknown, path: string): Record<string, string> {
  if (value === null) return {};
  if (!isRecord(value) || !Object.values(value).every((entry) => typeof entry === 'string')) {
    throw corrupt(path, `__metadata__ is ${describeValue(value)}, expected an object of strings`);
  }
  return value as Record<string, string>;
}

/**
 * One header entry, checked against the data region before anything is read: offsets are
 * integers inside it and span exactly dtype x shape bytes.
 */
function parseEntry(name: string, value: unknown, path: string, dataBytes: number): SafetensorsEntry {
  if (!isRecord(value)) throw corrupt(path, `tensor ${describeValue(name)} is ${describeValue(value)}, expected {dtype, shape, data_offsets}`);
  const dtype = parseSafetensorsDtype(value.dtype, name, path);
  const { shape, data_offsets: offsets } = value;
  if (!Array.isArray(shape) || !shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    throw corrupt(path, `tensor ${describeValue(name)} has shape ${describeValue(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((offset) => Number.isSafeInteger(offset) && offset >= 0)) {
    throw corrupt(path, `tensor ${describeValue(name)} has data_offsets ${describeValue(offsets)}, expected [begin, end] byte offsets`);
  }
  const [begin, end] = offsets as [number, number];
  const expected = shapeSize(shape as number[]) * dtypeByteSize(dtype);
  if (end - begin !== expected || end > dataBytes) {
    throw corrupt(
      path,
      `tensor ${describeValue(name)} spans bytes [${begin}, ${end}) but its ${dtype} shape [${shape}] needs ${expected} bytes inside a data region of ${dataBytes}`,
    );
  }
  return { name, dtype, shape: shape as number[], dataOffsets: [begin, end] };
}

/** Two tensors sharing bytes is a corrupt (or hostile) header: each tensor owns its range. */
function checkNoOverlap(entries: ReadonlyMap<string, SafetensorsEntry>, path: string): void {
  const sorted = [...entries.values()].filter((entry) => entry.dataOffsets[1] > entry.dataOffsets[0]).sort((a, b) => a.dataOffsets[0] - b.dataOffsets[0]);
  for (let index = 1; index < sorted.length; index++) {
    const previous = sorted[index - 1]!;
    const entry = sorted[index]!;
    if (entry.dataOffsets[0] < previous.dataOffsets[1]) {
      throw corrupt(path, `tensors ${describeValue(previous.name)} [${previous.dataOffsets}) and ${describeValue(entry.name)} [${entry.dataOffsets}) overlap`);
    }
  }
}

/**
 * Opens a safetensors file and parses its header, without reading tensor data: files of
 * many GB cost only the header until {@link SafetensorsFile.read} is called.
 */
export async function openSafetensors(path: string): Promise<SafetensorsFile> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `Cannot open safetensors file ${path}.`, cause, details: { path } });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `safetensors file ${path} is ${fileKindOf(stats)}, not a regular file.`,
        details: { path },
      });
    }
    const fileSize = stats.size;
    const prefix = Buffer.alloc(8);
    await handle.read(prefix, 0, 8, 0);
    const headerLength = Number(prefix.readBigUInt64LE(0));
    if (fileSize < 8 || headerLength > maxHeaderBytes || 8 + headerLength > fileSize) {
      throw corrupt(path, `header length ${headerLength} does not fit a file of ${fileSize} bytes`);
    }
    const headerBytes = Buffer.alloc(headerLength);
    await handle.read(headerBytes, 0, headerLength, 8);
    let header: unknown;
    try {
      header = JSON.parse(headerBytes.toString('utf8'));
    } catch (cause) {
      throw corrupt(path, 'the header is not JSON', cause);
    }
    if (!isRecord(header)) throw corrupt(path, `the header is ${describeValue(header)}, expected a JSON object of tensor entries`);
    const dataStart = 8 + headerLength;
    const entries = new Map<string, SafetensorsEntry>();
    let metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(header)) {
      if (name === '__metadata__') {
        metadata = parseMetadata(value, path);
        continue;
      }
      entries.set(name, parseEntry(name, value, path, fileSize - dataStart));
    }
    checkNoOverlap(entries, path);
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
