import { AgentFlowError, describeValue } from '@agentflow/core';
import type { TensorDtype } from '../dtype/dtype';

/** safetensors dtype names (the `dtype` field of the header) mapped to engine dtypes. */
const fromSafetensors: Record<string, TensorDtype> = {
  F64: 'float64',
  F32: 'float32',
  F16: 'float16',
  BF16: 'bfloat16',
  I64: 'int64',
  I32: 'int32',
  I16: 'int16',
  I8: 'int8',
  U64: 'uint64',
  U32: 'uint32',
  U16: 'uint16',
  U8: 'uint8',
  BOOL: 'bool',
};

const toSafetensors = Object.fromEntries(Object.entries(fromSafetensors).map(([key, value]) => [value, key])) as Record<
  TensorDtype,
  string
>;

/** One entry of a safetensors header. */
export interface SafetensorsEntry {
  name: string;
  dtype: TensorDtype;
  shape: number[];
  /** Byte range inside the data section, [begin, end). */
  dataOffsets: [number, number];
}

/** The safetensors dtype name for an engine dtype (`float32` -> `F32`). */
export function safetensorsDtypeName(dtype: TensorDtype): string {
  return toSafetensors[dtype];
}

/** The engine dtype for a safetensors dtype name, or a clear error for unsupported ones (F8...). */
export function parseSafetensorsDtype(name: unknown, tensorName: string, path: string): TensorDtype {
  const dtype = typeof name === 'string' ? fromSafetensors[name] : undefined;
  if (dtype === undefined) {
    throw new AgentFlowError({
      code: 'NOT_IMPLEMENTED',
      message: `safetensors file ${path}: tensor ${describeValue(tensorName)} has dtype ${describeValue(name)}; supported: ${Object.keys(fromSafetensors).join(', ')}.`,
      details: { path, tensorName, dtype: name },
    });
  }
  return dtype;
}
