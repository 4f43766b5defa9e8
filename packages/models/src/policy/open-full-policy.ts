import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { restoreInterruptedFolder } from '../weights/replace-folder';
import { createLocalPolicy } from './local-policy';
import { loadPolicyModel } from './policy-dtype';
import { type OpenedPolicy, openedPolicy, type PolicyOpenSettings } from './opened-policy';
import type { FullTrainableSet } from './trainable-set';

/** Settings for {@link openFullPolicy}. */
export interface OpenFullPolicySettings extends PolicyOpenSettings {
  /** A Hugging Face model folder: config.json, safetensors weights, tokenizer files. Its tokenizer is saved with every checkpoint. */
  modelDir: string;
  /** Patterns of the weights kept frozen (see FullTrainableSet); default none. */
  frozen?: readonly string[];
  /**
   * A checkpoint to start from: a model folder as the policy's `save` writes it (weights and
   * optimiser state). A folder without `config.json` (a checkpoint not written yet) leaves the
   * weights as `modelDir` has them; a save killed between its two renames is put back first.
   */
  checkpoint?: string;
  /** Restore the checkpoint's optimiser state with it (default true: a resume); false starts AdamW afresh. */
  optimizerState?: boolean;
}

/**
 * Opens the model folder `modelDir` as a policy that trains its weights (full-parameter), as
 * they are in `modelDir` or in `checkpoint`. The policy's `save(dir)` writes a whole Hugging Face
 * folder: float32 weights, config, `modelDir`'s tokenizer files, the optimiser state beside them.
 */
export async function openFullPolicy(settings: OpenFullPolicySettings): Promise<OpenedPolicy<FullTrainableSet>> {
  const { modelDir, checkpoint } = settings;
  const model = await loadPolicyModel(modelDir, { dtype: settings.dtype ?? 'auto', device: settings.device ?? 'auto', trainable: 'full' });
  const tokenizer = await loadTokenizer(modelDir, { chatTemplateKwargs: settings.chatTemplateKwargs });
  const policy = await createLocalPolicy({
    model,
    tokenizer,
    trainable: { kind: 'full', frozen: settings.frozen ?? [] },
    savedTokenizer: { copyFrom: modelDir },
    seed: settings.seed,
    device: settings.device,
    runtime: settings.runtime,
    objectives: settings.objectives,
    recompute: settings.recompute,
    ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}),
  });
  if (checkpoint) {
    restoreInterruptedFolder(checkpoint);
    try {
      if (existsSync(join(checkpoint, 'config.json'))) await policy.load(checkpoint, { optimizerState: settings.optimizerState ?? true });
    } catch (error) {
      await policy.release();
      throw error;
    }
  }
  return openedPolicy(modelDir, policy, tokenizer);
}
