import type { TrainablePolicy } from '@agentflow/core';
import { createLoraAdapter, type LoraSettings } from '../lora/lora-adapter';
import { writeMergedModelFolder } from '../lora/merged-model-folder';
import { loadLoraAdapter } from '../lora/peft-format';
import type { LocalPolicy } from './local-policy';
import { type LoraPolicyOpenSettings, type OpenedLoraPolicy, openLoraPolicy } from './open-lora-policy';

/** Settings for {@link createWarmStartedLora}. */
export interface WarmStartedLoraSettings {
  /** The base model folder the warm start's adapter applies to. */
  baseDir: string;
  /** Where the warm start's adapter is saved (a PEFT folder, as `LocalPolicy.save` writes it). */
  warmAdapterDir: string;
  /** Where the base with the warm adapter merged in is written, once, on first use (see writeMergedModelFolder). */
  mergedDir: string;
  /** The shape of the warm start's adapter. */
  warmLora: LoraSettings;
  /**
   * The shape of a fresh adapter trained after the warm start on the merged folder (B = 0: its
   * first step starts exactly at the warm policy); null: the later phase trains the warm adapter on.
   */
  trainedLora: LoraSettings | null;
  /** Seed, device, chat template variables, objectives: what every opened policy shares. */
  open: LoraPolicyOpenSettings;
}

/** Where an opened policy's adapter comes from, and how its optimiser starts. */
export interface WarmStartedOpenSettings {
  /** The saved adapter to start from; null: a fresh one (a folder without a saved adapter leaves it fresh too). */
  checkpoint: string | null;
  /** Restore the checkpoint's optimiser state (default true). */
  optimizerState?: boolean;
  /** Seeds a fresh adapter instead of `open.seed` (a warm start retried from a new initialisation). */
  seed?: number;
}

/**
 * A LoRA policy trained in two phases: a warm start (an adapter on the base folder, e.g.
 * supervised fine-tuning), then further training (e.g. DAPO), either of the warm adapter itself
 * or, with `trainedLora`, of a fresh adapter on the base with the warm adapter merged in.
 */
export interface WarmStartedLora {
  /** The folder the trained phase's adapter applies to: the base, or the merged folder with `trainedLora`. */
  readonly trainedBaseDir: string;
  /** The warm start's policy on the base folder; `checkpoint` defaults to the warm adapter's folder. */
  openWarm(settings?: Partial<WarmStartedOpenSettings>): Promise<OpenedLoraPolicy>;
  /** The trained phase's policy, writing the merged folder first when it needs it. */
  openTrained(settings: WarmStartedOpenSettings): Promise<OpenedLoraPolicy>;
  /** The base with the warm adapter merged, written once; resolves to its folder. */
  writeMergedWarm(): Promise<string>;
  /**
   * The warm policy frozen, scored through `trained`'s own inference session (no second copy of
   * the model): a KL reference. With `trainedLora`, the trained policy's base is the merged warm
   * policy and the reference its zero adapter; without, the warm adapter itself, read from its
   * folder (a resumed run has moved the trained adapter on).
   */
  warmReference(trained: LocalPolicy): Promise<Pick<TrainablePolicy, 'logprobs'>>;
}

/** The phases of a warm-started LoRA policy over the folders of `settings`. */
export function createWarmStartedLora(settings: WarmStartedLoraSettings): WarmStartedLora {
  const { baseDir, warmAdapterDir, mergedDir, trainedLora } = settings;
  const openOn = (modelDir: string, lora: LoraSettings, open: WarmStartedOpenSettings) =>
    openLoraPolicy({
      ...settings.open,
      ...(open.seed === undefined ? {} : { seed: open.seed }),
      modelDir,
      lora,
      optimizerState: open.optimizerState ?? true,
      ...(open.checkpoint ? { checkpoint: open.checkpoint } : {}),
    });
  const openWarm = (open: Partial<WarmStartedOpenSettings> = {}) =>
    openOn(baseDir, settings.warmLora, { ...open, checkpoint: open.checkpoint === undefined ? warmAdapterDir : open.checkpoint });
  const writeMergedWarm = async () => {
    await writeMergedModelFolder({ baseDir, adapterDir: warmAdapterDir, outDir: mergedDir });
    return mergedDir;
  };
  return {
    trainedBaseDir: trainedLora === null ? baseDir : mergedDir,
    openWarm,
    async openTrained(open) {
      return trainedLora === null ? openWarm(open) : openOn(await writeMergedWarm(), trainedLora, open);
    },
    writeMergedWarm,
    async warmReference(trained) {
      const { adapter, model } = trained;
      if (trainedLora !== null) return trained.frozen(createLoraAdapter(model.config, adapter.config));
      return trained.frozen(await loadLoraAdapter(warmAdapterDir, model.config));
    },
  };
}
