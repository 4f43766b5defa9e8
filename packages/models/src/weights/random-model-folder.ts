import { existsSync, readdirSync } from 'node:fs';
import { AgentFlowError } from '@agentflow/core';
import { getModelPreset } from '../config/presets';
import type { DecoderConfig } from '../config/decoder-config';
import { byteLevelVocabSize } from '../tokenizer/byte-level-tokenizer';
import { loadTokenizer, type ModelTokenizer } from '../tokenizer/load-tokenizer';
import { readTokenizerFile, tokenIdBound } from '../tokenizer/tokenizer-files';
import { saveModelFolder, type WeightDtype } from './model-folder';
import { createRandomModel } from './random-model';

/** Settings of {@link writeRandomModelFolder}. */
export interface RandomModelFolderSettings {
  /** The shape and family: a preset name of {@link getModelPreset} (`tiny`, `tiny-qwen2`, `tiny-llama`, `qwen3-0.6b-shape`, ...). */
  preset: string;
  /** The folder to write; absent or empty (a folder with anything in it is refused). */
  outDir: string;
  /** Seeds the random weights (HF's initialisation, see createRandomModel). */
  seed: number;
  /** Element type of the saved weights (config.json's torch_dtype). Default float32. */
  dtype?: WeightDtype;
  /** Copy the tokenizer files of this folder (e.g. a Qwen3 or Llama 3.1 checkpoint) instead of writing the byte-level tokenizer. */
  tokenizerDir?: string;
  /** Rows of the embedding; default the preset's. At least the tokenizer's id count. */
  vocabSize?: number;
  /** How the refusals name `outDir` and `vocabSize`: a CLI gives its options (`--out`). Default: the settings' names. */
  wording?: { outDir?: string; vocabSize?: string };
}

/** What {@link writeRandomModelFolder} wrote. */
export interface RandomModelFolder {
  /** The written config: the preset's, with the vocabulary and (copied tokenizer) EOS and BOS it got. */
  config: DecoderConfig;
  /** Parameters of the written weights. */
  parameters: number;
}

/** The id of tokenizer_config.json's `eos_token`, when it names one token. */
function tokenizerEosId(dir: string, tokenizer: ModelTokenizer): number | undefined {
  // Checked as loadTokenizer checked it (it loaded from this folder just before).
  const tokenizerConfig = (readTokenizerFile(dir, 'tokenizer_config.json', tokenIdBound(dir))?.value ?? {}) as { eos_token?: string | { content?: string } | null };
  const eos = tokenizerConfig.eos_token;
  const text = typeof eos === 'string' ? eos : eos?.content;
  if (!text) return undefined;
  const ids = tokenizer.encode(text);
  return ids.length === 1 ? ids[0] : undefined;
}

/**
 * Writes a random model folder of a preset (config.json, model.safetensors, tokenizer files),
 * as `agentflow model init` does, of the preset's family (Qwen3, Qwen2 or Llama: `tiny-qwen2`,
 * `tiny-llama`, ...). With a copied tokenizer, the config's EOS is the tokenizer's `eos_token`
 * (e.g. Qwen3's <|im_end|>, 151645; a preset whose EOS ids hold it keeps them all, as
 * `tiny-llama3.1-vocab` keeps 128001, 128008 and 128009), a BOS the tokenizer cannot produce is dropped,
 * and the vocabulary must hold every id the tokenizer can produce (else INVALID_ARGUMENT naming
 * the size to pass). A non-empty `outDir` is refused (INVALID_ARGUMENT).
 */
export async function writeRandomModelFolder(settings: RandomModelFolderSettings): Promise<RandomModelFolder> {
  const { outDir, tokenizerDir } = settings;
  const wording = settings.wording ?? {};
  if (existsSync(outDir) && readdirSync(outDir).length > 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${wording.outDir ?? 'outDir'} ${outDir} is not empty; choose a new folder.`,
      details: { out: outDir },
    });
  }
  const preset = getModelPreset(settings.preset);
  const config = { ...preset, vocabSize: settings.vocabSize ?? preset.vocabSize };
  let tokenizerSize = byteLevelVocabSize();
  if (tokenizerDir !== undefined) {
    const tokenizer = await loadTokenizer(tokenizerDir);
    tokenizerSize = tokenizer.size;
    const eos = tokenizerEosId(tokenizerDir, tokenizer);
    // A preset that already ends on it keeps its list (Llama 3.1's 128001, 128008 and 128009 end on <|eot_id|>).
    if (eos !== undefined && !config.eosTokenIds.includes(eos)) config.eosTokenIds = [eos];
    if (config.bosTokenId !== undefined && config.bosTokenId >= tokenizer.size) delete config.bosTokenId;
  }
  if (config.vocabSize < tokenizerSize) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The ${tokenizerDir === undefined ? 'byte-level' : tokenizerDir} tokenizer has ${tokenizerSize} ids, more than the vocabulary size ${config.vocabSize}; pass ${wording.vocabSize ?? 'vocabSize'} ${tokenizerSize} or more (Qwen3 checkpoints use 151936).`,
      details: { vocabSize: config.vocabSize, tokenizerSize },
    });
  }
  const model = createRandomModel(config, settings.seed);
  await saveModelFolder(outDir, model, {
    dtype: settings.dtype ?? 'float32',
    ...(tokenizerDir === undefined ? {} : { tokenizer: { copyFrom: tokenizerDir } }),
  });
  const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  return { config, parameters };
}
