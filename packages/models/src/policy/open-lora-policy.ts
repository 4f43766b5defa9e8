import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LoraSettings } from '../lora/lora-adapter';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { createLocalPolicy } from './local-policy';
import { loadPolicyModel } from './policy-dtype';
import { type OpenedLoraPolicy, openedPolicy, type PolicyOpenSettings } from './opened-policy';

/** @deprecated The same as {@link PolicyOpenSettings}, which full-parameter policies share. */
export type LoraPolicyOpenSettings = PolicyOpenSettings;

/** Settings for {@link openLoraPolicy}. */
export interface OpenLoraPolicySettings extends PolicyOpenSettings {
  /** A Hugging Face model folder: config.json, safetensors weights, tokenizer files. */
  modelDir: string;
  /** The adapter's shape; a fresh adapter starts as PEFT initialises it (B = 0). */
  lora: LoraSettings;
  /**
   * A saved adapter to start from (a PEFT folder as `LocalPolicy.save` writes it). A folder
   * without `adapter_config.json` (a checkpoint not written yet) leaves the adapter fresh.
   */
  checkpoint?: string;
  /** Restore the checkpoint's optimiser state with it (default true: a resume); false starts AdamW afresh. */
  optimizerState?: boolean;
}

/**
 * Opens the model folder `modelDir` as a trainable LoRA policy: a fresh adapter of shape
 * `lora`, or the one saved in `checkpoint` (with its optimiser state unless `optimizerState` is
 * false).
 */
export async function openLoraPolicy(settings: OpenLoraPolicySettings): Promise<OpenedLoraPolicy> {
  const { modelDir, checkpoint } = settings;
  const model = await loadPolicyModel(modelDir, { dtype: settings.dtype ?? 'auto', device: settings.device ?? 'auto', trainable: 'lora' });
  const tokenizer = await loadTokenizer(modelDir, { chatTemplateKwargs: settings.chatTemplateKwargs });
  const policy = await createLocalPolicy({
    model,
    tokenizer,
    lora: settings.lora,
    seed: settings.seed,
    device: settings.device,
    runtime: settings.runtime,
    objectives: settings.objectives,
    recompute: settings.recompute,
    ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}),
  });
  if (checkpoint && existsSync(join(checkpoint, 'adapter_config.json'))) {
    await policy.load(checkpoint, { optimizerState: settings.optimizerState ?? true });
  }
  return openedPolicy(modelDir, policy, tokenizer);
}
