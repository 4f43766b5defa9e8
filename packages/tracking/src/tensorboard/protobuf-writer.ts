/**
 * The few protobuf wire encodings TensorBoard's event files need (proto3: varints, 64-bit
 * doubles, 32-bit floats, length-delimited bytes and nested messages). A message is built as a
 * list of encoded fields and concatenated; no schema compiler, no dependency.
 */

/** Wire types of the protobuf encoding. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

function varint(value: bigint): number[] {
  // Negative int64 values are two's complement over 64 bits (ten bytes on the wire).
  let rest = BigInt.asUintN(64, value);
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return bytes;
}

const key = (field: number, wireType: number) => varint(BigInt((field << 3) | wireType));

/** A varint field (int32, int64, bool, enum). */
export function varintField(field: number, value: number | bigint): Uint8Array {
  return Uint8Array.from([...key(field, VARINT), ...varint(BigInt(value))]);
}

/** A `double` field, little-endian. */
export function doubleField(field: number, value: number): Uint8Array {
  const bytes = new Uint8Array(9);
  bytes[0] = key(field, FIXED64)[0] as number;
  new DataView(bytes.buffer).setFloat64(1, value, true);
  return bytes;
}

/** A `float` field (32-bit), little-endian. */
export function floatField(field: number, value: number): Uint8Array {
  const bytes = new Uint8Array(5);
  bytes[0] = key(field, FIXED32)[0] as number;
  new DataView(bytes.buffer).setFloat32(1, value, true);
  return bytes;
}

/** A `bytes` field, or an embedded message already encoded. */
export function bytesField(field: number, value: Uint8Array): Uint8Array {
  return concatBytes([Uint8Array.from([...key(field, LENGTH_DELIMITED), ...varint(BigInt(value.length))]), value]);
}

/** A `string` field, UTF-8. */
export function stringField(field: number, value: string): Uint8Array {
  return bytesField(field, new TextEncoder().encode(value));
}

/** The encoded fields of a message, in order: the message. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
