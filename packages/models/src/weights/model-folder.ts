import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, assertNever } from '@agentflow/core';
import {
  float32ToBfloat16Array,
  float32ToFloat16Array,
  type HostTensor,
  writeSafetensors,
} from '@agentflow/tensor';
import { loadQwen3Config, toHfConfig } from '../config/qwen3-config';
import { type TokenizerFiles, writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
import { copyTokenizerFiles } from '../tokenizer/copy-tokenizer-files';
import type { Qwen3Model } from './random-model';
import { type LoadWeightsSettings, loadModelWeights } from './load-weights';

/**
 * Loads config.json and the weights of a Hugging Face Qwen3 folder. The config's sizes are
 * bounded (QWEN3_BOUNDS), and the weights checked against it from the safetensors headers
 * before any tensor is read (see loadModelWeights).
 */
export async function loadModel(dir: string, settings: LoadWeightsSettings = {}): Promise<Qwen3Model> {
  const config = loadQwen3Config(dir);
  return { config, weights: await loadModelWeights(dir, config, settings) };
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
