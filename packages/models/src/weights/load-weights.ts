import { totalmem } from 'node:os';
import { AgentFlowError, describeValue } from '@agentflow/core';
import {
  bfloat16ToFloat16Array,
  dtypeByteSize,
  firstNonFiniteHalf,
  float16ToBfloat16Array,
  float32ToBfloat16Array,
  float32ToFloat16Array,
  type HostTensor,
  openSafetensors,
  type SafetensorsFile,
  type TensorDtype,
} from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { folderFile, readFolderJson } from './folder-files';
import { expectedWeightShapes, type ModelWeights, type WeightDtype, type WeightTensor } from './weight-names';

/** Settings of {@link loadModelWeights} and {@link checkModelWeights}. */
export interface LoadWeightsSettings {
  /**
   * Bytes the float32 weights may take in memory at most; default the machine's total memory
   * (`os.totalmem()`). A folder whose config implies more is refused before any tensor is read.
   */
  memoryLimitBytes?: number;
  /**
   * The element type the model's matrices are held in: 'float32' (default; every tensor decoded
   * to float32 on load), 'float16' or 'bfloat16': each 2-D tensor kept as the file stores it when
   * it is already that type (its bytes go to the sessions as they are, never through a float32
   * array), or converted to it one tensor at a time (bfloat16 to float16 bit to bit, exact within
   * float16's normal range). 1-D tensors (norms, biases) are float32 whatever this says. A value
   * the type cannot hold (float16 past 65504) is refused, naming the tensor.
   */
  dtype?: WeightDtype;
}

/** What {@link checkModelWeights} found: every expected tensor is there, with its shape. */
export interface WeightsPlan {
  /** Parameters the config implies (and the files hold). */
  parameters: number;
  /** Bytes of those parameters as float32, the default in-memory layout. */
  float32Bytes: number;
  /** Bytes they take in memory held as `dtype` (matrices at its size, 1-D tensors as float32). */
  bytes: number;
  /** The element type the files store the embedding in (a folder's weights share one, as transformers saves them). */
  storedDtype: TensorDtype;
  /** The safetensors files that hold them, relative to the folder. */
  files: string[];
}

const FLOAT_DTYPES = new Set(['float32', 'float16', 'bfloat16', 'float64']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Which safetensors files hold which tensors: one file, or a sharded index (its file names checked). */
function weightFiles(dir: string): Map<string, string[]> {
  const index = folderFile(dir, 'model.safetensors.index.json');
  if (index !== undefined) {
    const parsed = readFolderJson(index);
    const weightMap = isRecord(parsed) ? parsed.weight_map : undefined;
    if (!isRecord(weightMap)) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${index}: weight_map is ${describeValue(weightMap)}; expected an object of tensor name -> shard file name.`,
        details: { path: index },
      });
    }
    const byFile = new Map<string, string[]>();
    for (const [name, file] of Object.entries(weightMap)) {
      if (typeof file !== 'string') {
        throw new AgentFlowError({
          code: 'PARSE_ERROR',
          message: `${index}: weight_map.${name} is ${describeValue(file)}; expected a shard file name.`,
          details: { path: index, name },
        });
      }
      byFile.set(file, [...(byFile.get(file) ?? []), name]);
    }
    return byFile;
  }
  if (folderFile(dir, 'model.safetensors') !== undefined) return new Map([['model.safetensors', []]]);
  throw new AgentFlowError({
    code: 'NOT_FOUND',
    message: `No model.safetensors or model.safetensors.index.json in ${dir}.`,
    details: { dir },
  });
}

/** Opens every safetensors file of the folder (headers only); each is a checked file inside it. */
async function openWeightFiles(dir: string): Promise<Array<{ file: string; names: string[]; handle: SafetensorsFile }>> {
  const opened: Array<{ file: string; names: string[]; handle: SafetensorsFile }> = [];
  try {
    for (const [file, names] of weightFiles(dir)) {
      const path = folderFile(dir, file);
      if (path === undefined) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `${dir}/model.safetensors.index.json names the shard ${describeValue(file)}, which is not in the folder.`,
          details: { dir, file },
        });
      }
      opened.push({ file, names, handle: await openSafetensors(path) });
    }
    return opened;
  } catch (error) {
    await Promise.allSettled(opened.map(({ handle }) => handle.close()));
    throw error;
  }
}

/**
 * Where each expected tensor is, checked against the config from the headers alone: present,
 * of a float dtype, with the shape config.json implies, and in all no more float32 bytes than
 * the memory limit. Nothing is read or allocated beyond the headers.
 */
function planWeights(
  dir: string,
  config: DecoderConfig,
  files: ReadonlyArray<{ file: string; names: string[]; handle: SafetensorsFile }>,
  settings: LoadWeightsSettings,
): { plan: WeightsPlan; sources: Map<string, SafetensorsFile> } {
  const expected = expectedWeightShapes(config);
  const sources = new Map<string, SafetensorsFile>();
  for (const { file, names, handle } of files) {
    for (const name of names.length > 0 ? names : handle.entries.keys()) {
      if (!expected.has(name)) continue;
      if (!handle.entries.has(name)) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `${dir}/model.safetensors.index.json puts ${name} in ${file}, whose header has no such tensor.`,
          details: { dir, name, file },
        });
      }
      sources.set(name, handle);
    }
  }
  const dtype = settings.dtype ?? 'float32';
  let parameters = 0;
  let bytes = 0;
  for (const [name, shape] of expected) {
    const entry = sources.get(name)?.entries.get(name);
    if (!entry) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `Weight ${name} is missing from the safetensors files in ${dir}.`,
        details: { dir, name },
      });
    }
    if (entry.shape.join(',') !== shape.join(',')) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Weight ${name} in ${dir} has shape [${entry.shape}], config.json implies [${shape}].`,
        details: { dir, name, shape: entry.shape, expected: shape },
      });
    }
    if (!FLOAT_DTYPES.has(entry.dtype)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Weight ${name} in ${dir} is ${entry.dtype}; expected float32, float16 or bfloat16 (quantised checkpoints are not supported).`,
        details: { dir, name, dtype: entry.dtype },
      });
    }
    const size = shape.reduce((product, dimension) => product * dimension, 1);
    parameters += size;
    bytes += size * (shape.length === 2 ? dtypeByteSize(dtype) : 4);
  }
  const float32Bytes = parameters * 4;
  const limit = settings.memoryLimitBytes ?? totalmem();
  if (bytes > limit) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The weights of ${dir} are ${parameters} parameters, ${(bytes / 2 ** 30).toFixed(1)} GiB as ${dtype}; the limit is ${(limit / 2 ** 30).toFixed(1)} GiB (${settings.memoryLimitBytes === undefined ? "this machine's memory" : 'memoryLimitBytes'}).`,
      details: { dir, parameters, float32Bytes, bytes, dtype, limit },
    });
  }
  const storedDtype = sources.get('model.embed_tokens.weight')!.entries.get('model.embed_tokens.weight')!.dtype;
  return { plan: { parameters, float32Bytes, bytes, storedDtype, files: files.map(({ file }) => file) }, sources };
}

/** Tensors read at once by loadModelWeights (libuv's thread pool has four threads by default). */
const READS_IN_FLIGHT = 4;

/** The first value of `data` that is NaN or infinite, named by tensor and index. */
function checkFinite(dir: string, name: string, data: Float32Array | Float64Array): void {
  for (let index = 0; index < data.length; index++) {
    const value = data[index]!;
    if (value - value !== 0) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Weight ${name} in ${dir} has the value ${value} at index ${index}; every weight must be finite (the checkpoint is corrupt or diverged).`,
        details: { dir, name, index, value: String(value) },
      });
    }
  }
}

/** A half-precision tensor's first value that is not finite, named by tensor and index. */
function checkFiniteHalf(dir: string, name: string, tensor: HostTensor, dtype: 'float16' | 'bfloat16', bits: Uint16Array): void {
  const index = firstNonFiniteHalf(dtype, bits);
  if (index < 0) return;
  const stored = tensor.dtype === dtype ? 'has a value that is not finite' : `has a value that ${dtype} cannot hold (stored as ${tensor.dtype})`;
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `Weight ${name} in ${dir} ${stored} at index ${index}; every weight must be finite (load it as float32${tensor.dtype === dtype ? ', or the checkpoint is corrupt' : ''}).`,
    details: { dir, name, index, dtype, stored: tensor.dtype },
  });
}

/** A matrix as `dtype` from the file's tensor: its bytes when it is stored so, else converted (no float32 array for bf16 <-> f16). */
function halfWeight(dir: string, name: string, tensor: HostTensor, dtype: 'float16' | 'bfloat16'): WeightTensor {
  let bits: Uint16Array;
  if (tensor.dtype === dtype) bits = tensor.data as Uint16Array;
  else if (tensor.dtype === 'bfloat16') bits = bfloat16ToFloat16Array(tensor.data as Uint16Array);
  else if (tensor.dtype === 'float16') bits = float16ToBfloat16Array(tensor.data as Uint16Array);
  else {
    const values = tensor.data as Float32Array | Float64Array;
    checkFinite(dir, name, values);
    bits = dtype === 'float16' ? float32ToFloat16Array(values) : float32ToBfloat16Array(values);
  }
  checkFiniteHalf(dir, name, tensor, dtype, bits);
  return { dtype, shape: tensor.shape, data: bits };
}

async function withWeightFiles<T>(dir: string, use: (files: Awaited<ReturnType<typeof openWeightFiles>>) => Promise<T>): Promise<T> {
  const files = await openWeightFiles(dir);
  try {
    return await use(files);
  } finally {
    await Promise.allSettled(files.map(({ handle }) => handle.close()));
  }
}

/**
 * Checks the weights of a Hugging Face folder (any supported family) against its config from the safetensors
 * headers alone (the files are regular files inside the folder, every tensor the config implies
 * is there with its shape, the total fits the memory limit), reading no tensor data.
 */
export function checkModelWeights(dir: string, config: DecoderConfig, settings: LoadWeightsSettings = {}): Promise<WeightsPlan> {
  return withWeightFiles(dir, async (files) => planWeights(dir, config, files, settings).plan);
}

/**
 * Reads the weights of a Hugging Face folder of any supported family (single or sharded safetensors; bf16, f16 or
 * f32, converted to float32, or with `settings.dtype` matrices held in float16 / bfloat16). Everything {@link checkModelWeights} checks is checked first, from
 * the headers; then each tensor is read, and a NaN or infinite value is refused, naming the
 * tensor. A `model.` prefix-less checkpoint is not accepted: names must be HF's.
 */
export function loadModelWeights(dir: string, config: DecoderConfig, settings: LoadWeightsSettings = {}): Promise<ModelWeights> {
  return withWeightFiles(dir, async (files) => {
    const { sources } = planWeights(dir, config, files, settings);
    const entries = [...sources];
    const dtype = settings.dtype ?? 'float32';
    const loaded: (WeightTensor | undefined)[] = entries.map(() => undefined);
    // A few positioned reads in flight: the kernel fills (and faults in) one tensor's fresh pages
    // on libuv's threads while this thread checks the one before, instead of one after the other.
    // After a failure no new read starts, and the files stay open until the reads in flight end.
    let next = 0;
    let failure: unknown;
    const worker = async () => {
      while (next < entries.length && failure === undefined) {
        const index = next++;
        const [name, handle] = entries[index]!;
        try {
          const half = dtype !== 'float32' && handle.entries.get(name)!.shape.length === 2 ? dtype : undefined;
          if (half) loaded[index] = halfWeight(dir, name, await handle.read(name), half);
          else {
            const tensor = await handle.read(name, { as: 'float32' });
            checkFinite(dir, name, tensor.data as Float32Array);
            loaded[index] = { shape: tensor.shape, data: tensor.data as Float32Array };
          }
        } catch (error) {
          failure ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, entries.length) }, worker));
    if (failure !== undefined) throw failure;
    return new Map(entries.map(([name], index) => [name, loaded[index]!]));
  });
}
