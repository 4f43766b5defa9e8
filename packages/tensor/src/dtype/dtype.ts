import { AgentFlowError, describeValue } from '@agentflow/core';

/** Element types the engine understands. float16 and bfloat16 are stored as raw 16-bit patterns. */
export type TensorDtype =
  | 'float32'
  | 'float64'
  | 'float16'
  | 'bfloat16'
  | 'int64'
  | 'int32'
  | 'int16'
  | 'int8'
  | 'uint64'
  | 'uint32'
  | 'uint16'
  | 'uint8'
  | 'bool';

/** The typed array that holds each dtype on the host. */
export interface TypedArrayByDtype {
  float32: Float32Array;
  float64: Float64Array;
  float16: Uint16Array;
  bfloat16: Uint16Array;
  int64: BigInt64Array;
  int32: Int32Array;
  int16: Int16Array;
  int8: Int8Array;
  uint64: BigUint64Array;
  uint32: Uint32Array;
  uint16: Uint16Array;
  uint8: Uint8Array;
  bool: Uint8Array;
}

/** Any typed array a {@link HostTensor} may hold. */
export type TensorData = TypedArrayByDtype[TensorDtype];

/** A dense, row-major tensor in host memory. */
export interface HostTensor<D extends TensorDtype = TensorDtype> {
  dtype: D;
  shape: number[];
  data: TypedArrayByDtype[D];
}

const byteSizes: Record<TensorDtype, number> = {
  float32: 4,
  float64: 8,
  float16: 2,
  bfloat16: 2,
  int64: 8,
  int32: 4,
  int16: 2,
  int8: 1,
  uint64: 8,
  uint32: 4,
  uint16: 2,
  uint8: 1,
  bool: 1,
};

/** Every dtype name, in a stable order. */
export const tensorDtypes = Object.keys(byteSizes) as TensorDtype[];

/** Bytes per element of `dtype`. */
export function dtypeByteSize(dtype: TensorDtype): number {
  return byteSizes[dtype];
}

/** True for floating-point dtypes (the ones gradients flow through). */
export function isFloatDtype(dtype: TensorDtype): boolean {
  return dtype === 'float32' || dtype === 'float64' || dtype === 'float16' || dtype === 'bfloat16';
}

/** Number of elements of a shape; a scalar (`[]`) has one. */
export function shapeSize(shape: readonly number[]): number {
  let size = 1;
  for (const dim of shape) size *= dim;
  return size;
}

/** Allocates a typed array of `length` elements for `dtype` over a fresh buffer, or views `buffer`. */
export function allocateTypedArray<D extends TensorDtype>(
  dtype: D,
  length: number,
  buffer?: ArrayBuffer,
  byteOffset = 0,
): TypedArrayByDtype[D] {
  const source = buffer ?? new ArrayBuffer(length * byteSizes[dtype]);
  const offset = buffer ? byteOffset : 0;
  switch (dtype) {
    case 'float32':
      return new Float32Array(source, offset, length) as TypedArrayByDtype[D];
    case 'float64':
      return new Float64Array(source, offset, length) as TypedArrayByDtype[D];
    case 'int64':
      return new BigInt64Array(source, offset, length) as TypedArrayByDtype[D];
    case 'uint64':
      return new BigUint64Array(source, offset, length) as TypedArrayByDtype[D];
    case 'int32':
      return new Int32Array(source, offset, length) as TypedArrayByDtype[D];
    case 'uint32':
      return new Uint32Array(source, offset, length) as TypedArrayByDtype[D];
    case 'int16':
      return new Int16Array(source, offset, length) as TypedArrayByDtype[D];
    case 'float16':
    case 'bfloat16':
    case 'uint16':
      return new Uint16Array(source, offset, length) as TypedArrayByDtype[D];
    case 'int8':
      return new Int8Array(source, offset, length) as TypedArrayByDtype[D];
    default:
      return new Uint8Array(source, offset, length) as TypedArrayByDtype[D];
  }
}

/**
 * Builds a host tensor from plain numbers (or bigints for 64-bit integer dtypes), checking
 * that the element count matches the shape. float16/bfloat16 values are rounded to nearest even.
 */
export function createHostTensor<D extends TensorDtype>(
  dtype: D,
  shape: readonly number[],
  values?: ArrayLike<number | bigint> | TypedArrayByDtype[D],
): HostTensor<D> {
  for (const dim of shape) {
    if (!Number.isInteger(dim) || dim < 0) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Tensor shape ${describeValue(shape)} has a dimension that is not a non-negative integer.`,
        details: { shape },
      });
    }
  }
  const size = shapeSize(shape);
  if (values !== undefined && values.length !== size) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `A ${dtype} tensor of shape ${describeValue(shape)} needs ${size} values, got ${values.length}.`,
      details: { dtype, shape, length: values.length },
    });
  }
  const data = allocateTypedArray(dtype, size);
  if (values !== undefined) fillTypedArray(dtype, data, values);
  return { dtype, shape: [...shape], data };
}

function fillTypedArray(dtype: TensorDtype, target: TensorData, values: ArrayLike<number | bigint>): void {
  const length = values.length;
  if (dtype === 'int64' || dtype === 'uint64') {
    const out = target as BigInt64Array | BigUint64Array;
    for (let i = 0; i < length; i++) out[i] = BigInt(values[i] as number | bigint);
    return;
  }
  if (dtype === 'float16' || dtype === 'bfloat16') {
    const out = target as Uint16Array;
    const convert = dtype === 'float16' ? float32ToFloat16Bits : float32ToBfloat16Bits;
    for (let i = 0; i < length; i++) out[i] = convert(Number(values[i]));
    return;
  }
  const out = target as Float32Array;
  for (let i = 0; i < length; i++) out[i] = Number(values[i]);
}

const scratch = new DataView(new ArrayBuffer(4));

/** The IEEE binary16 bit pattern nearest to `value` (round half to even; NaN stays NaN). */
export function float32ToFloat16Bits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  // Re-bias from 127 to 15.
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the implicit-one mantissa into place, rounding to even.
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    const half = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    const roundUp = remainder > midpoint || (remainder === midpoint && (half & 1) === 1);
    return sign | (half + (roundUp ? 1 : 0));
  }
  const half = (halfExponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  const roundUp = remainder > 0x1000 || (remainder === 0x1000 && (half & 1) === 1);
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  return sign | (half + (roundUp ? 1 : 0));
}

/** The number a binary16 bit pattern stands for. */
export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** The bfloat16 bit pattern nearest to `value` (round half to even; NaN stays NaN). */
export function float32ToBfloat16Bits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  const rounded = bits + 0x7fff + ((bits >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** The number a bfloat16 bit pattern stands for. */
export function bfloat16BitsToFloat32(bits: number): number {
  scratch.setUint32(0, (bits & 0xffff) << 16);
  return scratch.getFloat32(0);
}

/** Converts float16 bit patterns to float32 values. */
export function float16ToFloat32Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16BitsToFloat32(bits[i]!);
  return out;
}

/** Converts float32 values to float16 bit patterns (round half to even). */
export function float32ToFloat16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToFloat16Bits(values[i]!);
  return out;
}

/** Converts bfloat16 bit patterns to float32 values (exact: a shift into the high half). */
export function bfloat16ToFloat32Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i]! << 16;
  return out;
}

/** Converts float32 values to bfloat16 bit patterns (round half to even). */
export function float32ToBfloat16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToBfloat16Bits(values[i]!);
  return out;
}

/**
 * Returns a float32 copy of a floating-point tensor (float16/bfloat16 decoded, float64
 * narrowed); float32 input is returned as is. Other dtypes are an error.
 */
export function toFloat32(tensor: HostTensor): HostTensor<'float32'> {
  switch (tensor.dtype) {
    case 'float32':
      return tensor as HostTensor<'float32'>;
    case 'float16':
      return { dtype: 'float32', shape: [...tensor.shape], data: float16ToFloat32Array(tensor.data as Uint16Array) };
    case 'bfloat16':
      return { dtype: 'float32', shape: [...tensor.shape], data: bfloat16ToFloat32Array(tensor.data as Uint16Array) };
    case 'float64':
      return { dtype: 'float32', shape: [...tensor.shape], data: Float32Array.from(tensor.data as Float64Array) };
    default:
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `toFloat32 needs a floating-point tensor, got dtype ${describeValue(tensor.dtype)}.`,
        details: { dtype: tensor.dtype },
      });
  }
}

/**
 * Converts bfloat16 bit patterns to float16 bit patterns without a float32 array: exact for
 * every value float16 holds as a normal number (magnitudes 2^-14 to 65504: bfloat16's 8
 * significant bits fit float16's 11), rounded to nearest even below (float16's subnormals, zero
 * under 2^-25). Infinity and NaN stay what they are; a finite value over 65504 becomes infinity,
 * which callers that need finite weights detect with {@link firstNonFiniteHalf}.
 */
export function bfloat16ToFloat16Array(bits: Uint16Array): Uint16Array {
  const out = new Uint16Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const value = bits[i]!;
    const exponent = (value >>> 7) & 0xff;
    // Normal float16 range (unbiased exponent -14..15) and not Inf/NaN: re-bias, widen the mantissa.
    if (exponent >= 113 && exponent <= 142) out[i] = ((value & 0x8000) | ((exponent - 112) << 10) | ((value & 0x7f) << 3)) & 0xffff;
    else out[i] = float32ToFloat16Bits(bfloat16BitsToFloat32(value));
  }
  return out;
}

/** Converts float16 bit patterns to bfloat16 bit patterns (float16 fits bfloat16's range; 3 mantissa bits are rounded off, to nearest even). */
export function float16ToBfloat16Array(bits: Uint16Array): Uint16Array {
  const out = new Uint16Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float32ToBfloat16Bits(float16BitsToFloat32(bits[i]!));
  return out;
}

/**
 * The index of the first infinite or NaN value among float16 or bfloat16 bit patterns (its
 * exponent bits all set), or -1 when every value is finite.
 */
export function firstNonFiniteHalf(dtype: 'float16' | 'bfloat16', bits: Uint16Array): number {
  const mask = dtype === 'float16' ? 0x7c00 : 0x7f80;
  for (let i = 0; i < bits.length; i++) if ((bits[i]! & mask) === mask) return i;
  return -1;
}
