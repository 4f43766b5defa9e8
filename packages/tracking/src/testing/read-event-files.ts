import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A reader of TensorBoard event files written independently of the package's writer (its own
 * bitwise CRC-32C and protobuf parsing), so a test that reads back what the writer wrote checks
 * the format, not the code against itself. It checks both CRCs of every record.
 */

/** CRC-32C bit by bit (no table), masked as TFRecord stores it. */
function maskedCrc(bytes: Uint8Array): number {
  let crc = ~0 >>> 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1));
  }
  crc = ~crc >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) % 2 ** 32;
}

/** One decoded field: its number, wire type and value (a bigint varint, a byte slice, or the raw 4/8 bytes). */
type Field = { number: number; wire: number; varint?: bigint; bytes?: Uint8Array };

function parseFields(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  const readVarint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error('protobuf: a varint runs past the end');
      const byte = bytes[at++] as number;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const key = Number(readVarint());
    const field: Field = { number: key >> 3, wire: key & 7 };
    if (field.wire === 0) field.varint = readVarint();
    else {
      const length = field.wire === 2 ? Number(readVarint()) : field.wire === 1 ? 8 : field.wire === 5 ? 4 : Number.NaN;
      if (!Number.isFinite(length) || at + length > bytes.length) throw new Error(`protobuf: field ${field.number} (wire type ${field.wire}) runs past the end`);
      field.bytes = bytes.subarray(at, at + length);
      at += length;
    }
    fields.push(field);
  }
  return fields;
}

const text = (bytes: Uint8Array | undefined) => new TextDecoder('utf-8', { fatal: true }).decode(bytes ?? new Uint8Array(0));
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** One event of a file, as far as the trackers write them. */
export interface DecodedEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  /** The summary's values: a scalar (`simpleValue`) or plugin data (`plugin`, its content's fields). */
  values: Array<{ tag: string; simpleValue?: number; plugin?: string; content?: Uint8Array }>;
}

/** The records of one TFRecord file, each CRC checked; throws naming the offset of a bad record. */
export function readTfRecords(bytes: Uint8Array): Uint8Array[] {
  const records: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 12 > bytes.length) throw new Error(`TFRecord: a header is cut short at byte ${at}`);
    const header = bytes.subarray(at, at + 8);
    const length = Number(view(header).getBigUint64(0, true));
    if (view(bytes.subarray(at + 8, at + 12)).getUint32(0, true) !== maskedCrc(header)) throw new Error(`TFRecord: the length CRC at byte ${at} does not match`);
    const data = bytes.subarray(at + 12, at + 12 + length);
    if (data.length !== length || at + 16 + length > bytes.length) throw new Error(`TFRecord: the record at byte ${at} is cut short`);
    if (view(bytes.subarray(at + 12 + length, at + 16 + length)).getUint32(0, true) !== maskedCrc(data)) throw new Error(`TFRecord: the data CRC of the record at byte ${at} does not match`);
    records.push(data);
    at += 16 + length;
  }
  return records;
}

/** An `Event` protobuf: wall_time 1, step 2, file_version 3, summary 5 (Summary.value 1: tag 1, simple_value 2, metadata 9). */
export function decodeEvent(bytes: Uint8Array): DecodedEvent {
  const event: DecodedEvent = { wallTime: 0, step: 0, values: [] };
  for (const field of parseFields(bytes)) {
    if (field.number === 1 && field.bytes) event.wallTime = view(field.bytes).getFloat64(0, true);
    else if (field.number === 2) event.step = Number(BigInt.asIntN(64, field.varint ?? 0n));
    else if (field.number === 3) event.fileVersion = text(field.bytes);
    else if (field.number === 5 && field.bytes) {
      for (const value of parseFields(field.bytes).filter((inner) => inner.number === 1)) {
        const decoded: DecodedEvent['values'][number] = { tag: '' };
        for (const inner of parseFields(value.bytes ?? new Uint8Array(0))) {
          if (inner.number === 1) decoded.tag = text(inner.bytes);
          else if (inner.number === 2 && inner.bytes) decoded.simpleValue = view(inner.bytes).getFloat32(0, true);
          else if (inner.number === 9 && inner.bytes) {
            const pluginData = parseFields(inner.bytes).find((meta) => meta.number === 1);
            for (const plugin of parseFields(pluginData?.bytes ?? new Uint8Array(0))) {
              if (plugin.number === 1) decoded.plugin = text(plugin.bytes);
              if (plugin.number === 2) decoded.content = plugin.bytes ?? new Uint8Array(0);
            }
          }
        }
        event.values.push(decoded);
      }
    }
  }
  return event;
}

/** The hparams of a `_hparams_/session_start_info` value's content: HParamsPluginData.session_start_info (3).hparams (1). */
export function decodeSessionStartHparams(content: Uint8Array): Record<string, string | number | boolean> {
  const start = parseFields(content).find((field) => field.number === 3);
  const hparams: Record<string, string | number | boolean> = {};
  for (const entry of parseFields(start?.bytes ?? new Uint8Array(0)).filter((field) => field.number === 1)) {
    const parts = parseFields(entry.bytes ?? new Uint8Array(0));
    const key = text(parts.find((part) => part.number === 1)?.bytes);
    const value = parseFields(parts.find((part) => part.number === 2)?.bytes ?? new Uint8Array(0))[0];
    if (value?.number === 2 && value.bytes) hparams[key] = view(value.bytes).getFloat64(0, true);
    else if (value?.number === 3) hparams[key] = text(value.bytes);
    else if (value?.number === 4) hparams[key] = value.varint === 1n;
  }
  return hparams;
}

/** Every event of every `events.out.tfevents.*` file in `dir`, file by file in name order, CRCs checked. */
export function readEventFiles(dir: string): Array<{ file: string; events: DecodedEvent[] }> {
  return readdirSync(dir)
    .filter((name) => name.startsWith('events.out.tfevents.'))
    .sort()
    .map((name) => ({ file: name, events: readTfRecords(new Uint8Array(readFileSync(join(dir, name)))).map(decodeEvent) }));
}

/** The scalars of the event files in `dir`: `tag -> [[step, value], ...]`, in the order written. */
export function readScalars(dir: string): Map<string, Array<[number, number]>> {
  const scalars = new Map<string, Array<[number, number]>>();
  for (const { events } of readEventFiles(dir)) {
    for (const event of events) {
      for (const value of event.values) {
        if (value.simpleValue === undefined) continue;
        scalars.set(value.tag, [...(scalars.get(value.tag) ?? []), [event.step, value.simpleValue]]);
      }
    }
  }
  return scalars;
}
