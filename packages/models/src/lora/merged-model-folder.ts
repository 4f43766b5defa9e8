import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, saveModelFolder } from '../weights/model-folder';
import { loadLoraAdapter, mergeLoraAdapter } from './peft-format';

/** Settings for {@link writeMergedModelFolder}. */
export interface MergedModelFolderSettings {
  /** The Hugging Face folder the adapter was trained on (weights and tokenizer files). */
  baseDir: string;
  /** The adapter, a PEFT folder (as `saveLoraAdapter` and `LocalPolicy.save` write it). */
  adapterDir: string;
  /** Where the merged folder goes: a plain model folder with the base's tokenizer files. */
  outDir: string;
}

/**
 * Writes the base model with the adapter merged in (W' = W + scale * B A) as a plain model
 * folder, once: a folder that already has its `config.json` is kept as it is. saveModelFolder
 * writes it beside and renames it into place, so a kill leaves no half folder.
 */
export async function writeMergedModelFolder(settings: MergedModelFolderSettings): Promise<void> {
  const { baseDir, adapterDir, outDir } = settings;
  if (existsSync(join(outDir, 'config.json'))) return;
  const model = await loadModel(baseDir);
  const adapter = await loadLoraAdapter(adapterDir, model.config);
  await saveModelFolder(outDir, { ...model, weights: mergeLoraAdapter(model.weights, adapter) }, { tokenizer: { copyFrom: baseDir } });
}
