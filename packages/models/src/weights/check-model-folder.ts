import { existsSync, readdirSync } from 'node:fs';
import { loadDecoderConfig } from '../config/decoder-config';
import { REQUIRED_TOKENIZER_FILES } from '../tokenizer/copy-tokenizer-files';
import { checkModelWeights, type LoadWeightsSettings, type WeightsPlan } from './load-weights';

/** What {@link checkModelFolder} found: the weights' plan, or the problem in words. */
export type ModelFolderCheck = { ok: true; plan: WeightsPlan } | { ok: false; problem: string };

/**
 * Whether `dir` is a model folder that will load, without reading a tensor: it exists, has
 * config.json, tokenizer.json, tokenizer_config.json and *.safetensors, a config.json inside the
 * bounds, and the weights that config implies (from the safetensors headers, see
 * {@link checkModelWeights}). A problem is returned, not thrown: `model folder DIR does not
 * exist`, `model folder DIR lacks FILES`, or the loader's message.
 */
export async function checkModelFolder(dir: string, settings: LoadWeightsSettings = {}): Promise<ModelFolderCheck> {
  if (!existsSync(dir)) return { ok: false, problem: `model folder ${dir} does not exist` };
  const files = readdirSync(dir);
  const missing = ['config.json', ...REQUIRED_TOKENIZER_FILES].filter((file) => !files.includes(file));
  if (!files.some((file) => file.endsWith('.safetensors'))) missing.push('*.safetensors');
  if (missing.length > 0) return { ok: false, problem: `model folder ${dir} lacks ${missing.join(', ')}` };
  try {
    return { ok: true, plan: await checkModelWeights(dir, loadDecoderConfig(dir), settings) };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}
