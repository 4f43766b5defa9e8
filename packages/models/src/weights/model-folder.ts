import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, assertNever } from '@agentflow/core';
import {
  float32ToBfloat16Array,
  float32ToFloat16Array,
  type HostTensor,
  openSafetensors,
  writeSafetensors,
} from '@agentflow/tensor';
import { loadQwen3Config, type Qwen3Config, toHfConfig } from '../config/qwen3-config';
import { type TokenizerFiles, writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
import { copyTokenizerFiles } from '../tokenizer/copy-tokenizer-files';
import type { Qwen3Model } from './random-model';
import { expectedWeightShapes, type ModelWeights } from './weight-names';

/** Which safetensors files hold which tensors: one file, or a sharded index. */
function weightFiles(dir: string): Map<string, string[]> {
  const single = join(dir, 'model.safetensors');
  const index = join(dir, 'model.safetensors.index.json');
  if (existsSync(index)) {
    let weightMap: Record<string, string>;
    try {
      weightMap = (JSON.parse(readFileSync(index, 'utf8')) as { weight_map: Record<string, string> }).weight_map;
    } catch (cause) {
      throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${index} is not a valid safetensors index.`, cause });
    }
    const byFile = new Map<string, string[]>();
    for (const [name, file] of Object.entries(weightMap ?? {})) {
      byFile.set(file, [...(byFile.get(file) ?? []), name]);
    }
    return byFile;
  }
  if (existsSync(single)) return new Map([['model.safetensors', []]]);
  throw new AgentFlowError({
    code: 'NOT_FOUND',
    message: `No model.safetensors or model.safetensors.index.json in ${dir}.`,
    details: { dir },
  });
}

/**
 * Reads the weights of a Hugging Face Qwen3 folder (single or sharded safetensors; bf16, f16 or
 * f32, converted to float32), checking that every tensor the config implies is there with the
 * right shape. A `model.` prefix-less checkpoint is not accepted: names must be HF's.
 */
export async function loadModelWeights(dir: string, config: Qwen3Config): Promise<ModelWeights> {
  const expected = expectedWeightShapes(config);
  const weights: ModelWeights = new Map();
  for (const [file, names] of weightFiles(dir)) {
    const handle = await openSafetensors(join(dir, file));
    try {
      const wanted = (names.length > 0 ? names : [...handle.entries.keys()]).filter((name) => expected.has(name));
      for (const name of wanted) {
        const tensor = await handle.read(name, { as: 'float32' });
        weights.set(name, { shape: tensor.shape, data: tensor.data as Float32Array });
      }
    } finally {
      await handle.close();
    }
  }
  for (const [name, shape] of expected) {
    const found = weights.get(name);
    if (!found) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `Weight ${name} is missing from the safetensors files in ${dir}.`,
        details: { dir, name },
      });
    }
    if (found.shape.join(',') !== shape.join(',')) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Weight ${name} in ${dir} has shape [${found.shape}], config.json implies [${shape}].`,
        details: { dir, name, shape: found.shape, expected: shape },
      });
    }
  }
  return weights;
}

/** Loads config.json and the weights of a Hugging Face Qwen3 folder. */
export async function loadModel(dir: string): Promise<Qwen3Model> {
  const config = loadQwen3Config(dir);
  return { config, weights: await loadModelWeights(dir, config) };
}

/** Element types {@link saveModelFolder} can store weights in (config.json's `torch_dtype`). */
export type WeightDtype = 'float32' | 'bfloat16' | 'float16';

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
}

function encodeWeights(name: string, data: Float32Array, dtype: WeightDtype): HostTensor['data'] {
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

function writeTokenizer(dir: string, tokenizer: TokenizerSource | undefined): void {
  if (tokenizer === null) return;
  if (tokenizer !== undefined && 'copyFrom' in tokenizer) copyTokenizerFiles(tokenizer.copyFrom, dir);
  else writeTokenizerFiles(dir, tokenizer);
}

/**
 * Writes a complete HF folder: config.json, generation_config.json, model.safetensors (HF names,
 * in `settings.dtype`) and the tokenizer files. A copied tokenizer's generation_config.json, when
 * it has one, replaces the one written from the config.
 */
export async function saveModelFolder(dir: string, model: Qwen3Model, settings: SaveModelFolderSettings = {}): Promise<void> {
  const dtype = settings.dtype ?? 'float32';
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify({ ...toHfConfig(model.config), torch_dtype: dtype }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'generation_config.json'),
    `${JSON.stringify({ eos_token_id: model.config.eosTokenIds, do_sample: true }, null, 2)}\n`,
  );
  const tensors: Record<string, HostTensor> = {};
  for (const [name, tensor] of model.weights) {
    tensors[name] = { dtype, shape: tensor.shape, data: encodeWeights(name, tensor.data, dtype) } as HostTensor;
  }
  await writeSafetensors(join(dir, 'model.safetensors'), tensors, { format: 'pt' });
  writeTokenizer(dir, settings.tokenizer);
}
