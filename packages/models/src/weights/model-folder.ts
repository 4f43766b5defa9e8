import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, assertNever, diskFullError, isDiskFullError } from '@agentflow/core';
import {
  float32ToBfloat16Array,
  float32ToFloat16Array,
  type HostTensor,
  toFloat32,
  writeSafetensors,
} from '@agentflow/tensor';
import { loadDecoderConfig } from '../config/decoder-config';
import { toHfConfig } from '../config/hf-config-json';
import { createByteLevelTokenizerFiles, type TokenizerFiles, writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
import { copyTokenizerFiles, OPTIONAL_TOKENIZER_FILES, REQUIRED_TOKENIZER_FILES } from '../tokenizer/copy-tokenizer-files';
import { generationConfigJson, padTokenIdOf } from './generation-config';
import { type LoadWeightsSettings, loadModelWeights } from './load-weights';
import type { DecoderModel } from './random-model';
import { folderSiblings, writeFolderAtomic } from './replace-folder';
import { DEFAULT_MAX_SHARD_BYTES, planShards } from './shard-plan';
import { type ModelWeights, type WeightDtype, type WeightTensor, weightDtypeOf } from './weight-names';

/**
 * Loads config.json and the weights of a Hugging Face folder of a supported family (Qwen2/Qwen2.5,
 * Qwen3, Llama; parseDecoderConfig). The config's sizes are bounded (DECODER_BOUNDS), and the
 * weights checked against it from the safetensors headers before any tensor is read (see
 * loadModelWeights).
 */
export async function loadModel(dir: string, settings: LoadWeightsSettings = {}): Promise<DecoderModel> {
  const config = loadDecoderConfig(dir);
  return { config, weights: await loadModelWeights(dir, config, settings) };
}

/** Element types {@link saveModelFolder} can store weights in (config.json's `torch_dtype`). */
export type { WeightDtype } from './weight-names';

/**
 * The tokenizer {@link saveModelFolder} writes: the JSON documents themselves, the files of an
 * existing folder (`copyFrom`, e.g. a Qwen3 checkpoint; see copyTokenizerFiles), or none (null).
 */
export type TokenizerSource = TokenizerFiles | { copyFrom: string } | null;

/** What {@link saveModelFolder} writes besides config and weights. */
export interface SaveModelFolderSettings {
  /** Tokenizer to write; default the byte-level tokenizer. */
  tokenizer?: TokenizerSource;
  /**
   * Element type of the safetensors weights, also written as config.json's `torch_dtype`;
   * default float32 (exact). Published Qwen3 checkpoints are bfloat16: values are rounded to the
   * nearest bf16 (ties to even), which keeps float32's range and 8 significant bits. float16
   * keeps 11 significant bits but overflows past 65504, which is an error here.
   */
  dtype?: WeightDtype;
  /**
   * Largest safetensors file, in bytes of tensor data; default {@link DEFAULT_MAX_SHARD_BYTES}
   * (5 GB, transformers 4.x's `max_shard_size`). A model that fits is one `model.safetensors`;
   * a larger one is cut in order into `model-00001-of-0000n.safetensors` files with the index
   * `model.safetensors.index.json` (see planShards).
   */
  maxShardBytes?: number;
  /**
   * generation_config.json's `pad_token_id`; default the written tokenizer's `pad_token` (the
   * byte-level tokenizer's `<|endoftext|>`), none for a copied one (whose own
   * generation_config.json, when it has one, is copied).
   */
  padTokenId?: number;
  /**
   * Files of the caller's that belong in the same folder (a trainer's optimiser state): their
   * names, which a later save may then replace, and the function that writes them into the
   * folder being written, before it is renamed into place, so the weights and these files land
   * together or not at all.
   */
  alongside?: { files: readonly string[]; write(partialDir: string): Promise<void> };
}

/** `tensor` in `dtype`: as it is when it is held so, else converted (half-precision tensors through float32, one at a time). */
function encodeWeights(name: string, tensor: WeightTensor, dtype: WeightDtype): HostTensor['data'] {
  if (weightDtypeOf(tensor) === dtype) return tensor.data;
  const data = tensor.dtype === 'float16' || tensor.dtype === 'bfloat16' ? toFloat32({ dtype: tensor.dtype, shape: tensor.shape, data: tensor.data }).data : tensor.data;
  switch (dtype) {
    case 'float32':
      return data;
    case 'bfloat16':
      return float32ToBfloat16Array(data);
    case 'float16': {
      const bits = float32ToFloat16Array(data);
      for (let index = 0; index < bits.length; index++) {
        if ((bits[index]! & 0x7c00) === 0x7c00 && Number.isFinite(data[index]!)) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `Weight ${name} has the value ${data[index]} at index ${index}, beyond float16's range (65504); save as bfloat16 or float32.`,
            details: { name, index, value: data[index] },
          });
        }
      }
      return bits;
    }
    default:
      return assertNever(dtype);
  }
}

const DTYPE_BYTES: Record<WeightDtype, number> = { float32: 4, bfloat16: 2, float16: 2 };

function writeTokenizer(dir: string, tokenizer: TokenizerSource): void {
  if (tokenizer === null) return;
  if ('copyFrom' in tokenizer) copyTokenizerFiles(tokenizer.copyFrom, dir);
  else writeTokenizerFiles(dir, tokenizer);
}

/** The weights as shards (planShards), each tensor encoded just before its shard is written; the index when there are several. */
async function writeWeights(dir: string, weights: ModelWeights, dtype: WeightDtype, maxShardBytes: number): Promise<void> {
  const plan = planShards(
    [...weights].map(([name, tensor]) => ({ name, bytes: tensor.data.length * DTYPE_BYTES[dtype] })),
    maxShardBytes,
  );
  for (const shard of plan.shards) {
    const tensors: Record<string, HostTensor> = {};
    for (const name of shard.names) {
      const tensor = weights.get(name)!;
      tensors[name] = { dtype, shape: tensor.shape, data: encodeWeights(name, tensor, dtype) } as HostTensor;
    }
    await writeSafetensors(join(dir, shard.file), tensors, { format: 'pt' });
  }
  if (plan.shards.length === 1) return;
  const weightMap: Record<string, string> = {};
  for (const shard of plan.shards) for (const name of shard.names) weightMap[name] = shard.file;
  // As transformers writes it: keys sorted, two-space indent.
  const sorted = Object.fromEntries(Object.entries(weightMap).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)));
  writeFileSync(join(dir, 'model.safetensors.index.json'), `${JSON.stringify({ metadata: { total_size: plan.totalBytes }, weight_map: sorted }, null, 2)}\n`);
}

/** What a model folder holds (transformers' files and the tokenizer's); anything else is not this function's to delete. */
const MODEL_FOLDER_FILES = new Set<string>([
  'config.json',
  'generation_config.json',
  'model.safetensors',
  'model.safetensors.index.json',
  'added_tokens.json',
  'chat_template.jinja',
  ...REQUIRED_TOKENIZER_FILES,
  ...OPTIONAL_TOKENIZER_FILES,
]);
const SHARD_FILE = /^model-\d{5}-of-\d{5}\.safetensors$/;

/** Refuses to replace a folder that holds anything besides model folder files (a mistyped path must not lose a home folder). */
function checkReplaceable(dir: string, alongside: readonly string[]): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  const foreign = readdirSync(dir).filter((entry) => !MODEL_FOLDER_FILES.has(entry) && !SHARD_FILE.test(entry) && !alongside.includes(entry));
  if (foreign.length > 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Cannot save a model folder over ${resolve(dir)}: it holds ${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ` and ${foreign.length - 5} more` : ''}, which is not part of a model folder and would be deleted; choose an empty or new folder.`,
      details: { dir, foreign: foreign.slice(0, 20) },
    });
  }
}

/**
 * Writes a complete HF folder as transformers' `save_pretrained` does: config.json,
 * generation_config.json, the weights (HF names, in `settings.dtype`) as one model.safetensors or,
 * past `settings.maxShardBytes`, shards with model.safetensors.index.json, and the tokenizer files.
 * A copied tokenizer's generation_config.json, when it has one, replaces the one written from the
 * config.
 *
 * Atomic (writeFolderAtomic): the folder is written beside, at `<dir>.partial`, and renamed into
 * place; an existing `dir` is replaced whole (files of an earlier save, shards included, do not
 * survive), and kept as it was when anything fails. An existing `dir` that holds anything besides
 * a model folder's files is refused rather than deleted.
 *
 * A full device or quota (ENOSPC, EDQUOT) while the new folder is written is DISK_FULL naming
 * `dir` and the bytes of the weights: the partial folder is removed and `dir` is the previous
 * folder, whole (or absent, when there was none).
 */
export async function saveModelFolder(dir: string, model: DecoderModel, settings: SaveModelFolderSettings = {}): Promise<void> {
  const dtype = settings.dtype ?? 'float32';
  const maxShardBytes = settings.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  planShards([], maxShardBytes); // checks the size before anything is written
  checkReplaceable(dir, settings.alongside?.files ?? []);
  const tokenizer = settings.tokenizer === undefined ? createByteLevelTokenizerFiles() : settings.tokenizer;
  const padTokenId = settings.padTokenId ?? (tokenizer === null || 'copyFrom' in tokenizer ? undefined : padTokenIdOf(tokenizer));
  // A folder a killed replacement left at `<dir>.previous` is put back by writeFolderAtomic.
  const existed = existsSync(dir) || existsSync(folderSiblings(dir).previous);
  try {
    await writeFolderAtomic(dir, async (partial) => {
      writeFileSync(join(partial, 'config.json'), `${JSON.stringify({ ...toHfConfig(model.config), torch_dtype: dtype }, null, 2)}\n`);
      writeFileSync(join(partial, 'generation_config.json'), generationConfigJson(model.config, padTokenId));
      await writeWeights(partial, model.weights, dtype, maxShardBytes);
      writeTokenizer(partial, tokenizer);
      await settings.alongside?.write(partial);
    });
  } catch (error) {
    if (!isDiskFullError(error)) throw error;
    let bytes = 0;
    for (const tensor of model.weights.values()) bytes += tensor.data.length * DTYPE_BYTES[dtype];
    const target = resolve(dir);
    throw diskFullError(target, bytes, error, { kept: existed ? `the previous folder ${target} is intact` : `nothing was left at ${target}` });
  }
}
