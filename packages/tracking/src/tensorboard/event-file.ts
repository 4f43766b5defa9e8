import { maskedCrc32c } from './crc32c';
import { bytesField, concatBytes, doubleField, floatField, stringField, varintField } from './protobuf-writer';

/**
 * TensorBoard's event files: TFRecord records, each an `Event` protobuf (tensorflow/core/util/event.proto,
 * tensorboard/compat/proto/summary.proto). Field numbers used here:
 *   Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
 *   Summary { repeated Value value = 1; }
 *   Summary.Value { string tag = 1; float simple_value = 2; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
 *   SummaryMetadata { PluginData plugin_data = 1; }  PluginData { string plugin_name = 1; bytes content = 2; }
 *   TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2; }  TensorShapeProto { repeated Dim dim = 2; }
 */

/** The version string of the first event of every file. */
export const EVENT_FILE_VERSION = 'brain.Event:2';

/**
 * One TFRecord: the data's length (uint64, little-endian), the masked CRC-32C of those 8 bytes,
 * the data, the masked CRC-32C of the data.
 */
export function tfRecord(data: Uint8Array): Uint8Array {
  const header = new Uint8Array(12);
  const view = new DataView(header.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(header.subarray(0, 8)), true);
  const footer = new Uint8Array(4);
  new DataView(footer.buffer).setUint32(0, maskedCrc32c(data), true);
  return concatBytes([header, data, footer]);
}

function event(wallTimeMs: number, step: number, body: Uint8Array): Uint8Array {
  return concatBytes([doubleField(1, wallTimeMs / 1000), ...(step === 0 ? [] : [varintField(2, Math.trunc(step))]), body]);
}

/** The first event of a file: its `file_version`. */
export function fileVersionEvent(wallTimeMs: number): Uint8Array {
  return event(wallTimeMs, 0, stringField(3, EVENT_FILE_VERSION));
}

/** One event holding `values` (tag, number) at `step` as `simple_value` scalars (stored as 32-bit floats). */
export function scalarsEvent(wallTimeMs: number, step: number, values: ReadonlyArray<{ tag: string; value: number }>): Uint8Array {
  const summary = concatBytes(values.map(({ tag, value }) => bytesField(1, concatBytes([stringField(1, tag), floatField(2, value)]))));
  return event(wallTimeMs, step, bytesField(5, summary));
}

/** The hparams plugin's `Status` enum (tensorboard/plugins/hparams/api.proto). */
export const HPARAMS_STATUS = { success: 1, failure: 2 } as const;

/** A summary value that carries only plugin metadata, as the hparams plugin writes it: an empty float tensor of shape [0]. */
function pluginEvent(wallTimeMs: number, tag: string, pluginName: string, content: Uint8Array): Uint8Array {
  const metadata = bytesField(1, concatBytes([stringField(1, pluginName), bytesField(2, content)]));
  const nullTensor = concatBytes([varintField(1, 1 /* DT_FLOAT */), bytesField(2, bytesField(2, new Uint8Array(0)))]);
  const value = concatBytes([stringField(1, tag), bytesField(8, nullTensor), bytesField(9, metadata)]);
  return event(wallTimeMs, 0, bytesField(5, bytesField(1, value)));
}

/** google.protobuf.Value: number_value = 2, string_value = 3, bool_value = 4. */
function protobufValue(value: string | number | boolean): Uint8Array {
  if (typeof value === 'number') return doubleField(2, value);
  if (typeof value === 'boolean') return varintField(4, value ? 1 : 0);
  return stringField(3, value);
}

/**
 * The hparams plugin's session start (`_hparams_/session_start_info`): HParamsPluginData { int32 version = 1;
 * SessionStartInfo session_start_info = 3; }, SessionStartInfo { map<string, Value> hparams = 1; double start_time_secs = 5; }.
 */
export function hparamsStartEvent(wallTimeMs: number, hparams: Readonly<Record<string, string | number | boolean>>): Uint8Array {
  const entries = Object.entries(hparams).map(([key, value]) => bytesField(1, concatBytes([stringField(1, key), bytesField(2, protobufValue(value))])));
  const start = concatBytes([...entries, doubleField(5, wallTimeMs / 1000)]);
  return pluginEvent(wallTimeMs, '_hparams_/session_start_info', 'hparams', bytesField(3, start));
}

/** The hparams plugin's session end (`_hparams_/session_end_info`): SessionEndInfo { Status status = 1; double end_time_secs = 2; }. */
export function hparamsEndEvent(wallTimeMs: number, status: keyof typeof HPARAMS_STATUS): Uint8Array {
  const end = concatBytes([varintField(1, HPARAMS_STATUS[status]), doubleField(2, wallTimeMs / 1000)]);
  return pluginEvent(wallTimeMs, '_hparams_/session_end_info', 'hparams', bytesField(4, end));
}
