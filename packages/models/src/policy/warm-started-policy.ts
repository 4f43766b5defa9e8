import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, assertNever, type TrainablePolicy } from '@agentflow/core';
import { createCausalLm } from '../engine/causal-lm';
import { createLoraAdapter, type LoraSettings } from '../lora/lora-adapter';
import { writeMergedModelFolder } from '../lora/merged-model-folder';
import { loadLoraAdapter, saveLoraAdapter } from '../lora/peft-format';
import { loadModel } from '../weights/model-folder';
import { restoreInterruptedFolder } from '../weights/replace-folder';
import type { LocalPolicy } from './local-policy';
import { openFullPolicy } from './open-full-policy';
import { openLoraPolicy } from './open-lora-policy';
import type { OpenedPolicy, PolicyOpenSettings } from './opened-policy';
import type { TrainableSet } from './trainable-set';
import { type TrainedPhaseTraining, trainsWarmAdapterOn, type WarmPhaseTraining } from './warm-started-phases';

/** Settings for {@link createWarmStartedPolicy}. */
export interface WarmStartedPolicySettings {
  /** The base model folder the warm phase starts from. */
  baseDir: string;
  /**
   * Where the warm phase's checkpoint is saved, as `LocalPolicy.save` writes it: a PEFT folder
   * (LoRA), or a Hugging Face model folder with the optimiser state beside it (full).
   */
  warmDir: string;
  /**
   * Where the base with the warm adapter merged is written, once, on first use (see
   * writeMergedModelFolder). A full warm phase writes nothing there: its checkpoint is the warm model.
   */
  mergedDir: string;
  /** What the warm phase trains: an adapter on the base folder, or its weights. */
  warm: WarmPhaseTraining;
  /** What the trained phase trains: an adapter (fresh on the merged warm model, or the warm one trained on), or every weight of the merged warm model. */
  trained: TrainedPhaseTraining;
  /** Seed, device, chat template variables, objectives: what every opened policy shares. */
  open: PolicyOpenSettings;
}

/** Where an opened policy starts, and how its optimiser starts. */
export interface WarmStartedOpenSettings {
  /**
   * The saved checkpoint to start from (an adapter, or a model folder when the phase trains in
   * full); null: none, the phase's starting point (a fresh adapter, or the weights it opens). A
   * folder without a saved checkpoint in it is none too.
   */
  checkpoint: string | null;
  /** Restore the checkpoint's optimiser state (default true). */
  optimizerState?: boolean;
  /** Seeds a fresh adapter instead of `open.seed` (a warm start retried from a new initialisation). */
  seed?: number;
}

/** A frozen policy scoring log-probs (a KL reference), released when training is over. */
export interface WarmReference extends Pick<TrainablePolicy, 'logprobs'> {
  /** Frees what the reference holds of its own (a full-parameter reference's model and session). */
  release(): Promise<void>;
}

/**
 * A policy trained in two phases: a warm start (e.g. supervised fine-tuning) on the base folder,
 * then further training (e.g. DAPO). Each phase trains a LoRA adapter or every weight:
 *
 * | warm | trained | the trained phase opens | its checkpoints | its KL reference |
 * | --- | --- | --- | --- | --- |
 * | LoRA | LoRA, no adapter of its own | the base with the warm adapter, trained on | PEFT folders | the warm adapter, read from its folder, through the policy's session |
 * | LoRA | LoRA | a fresh adapter on the merged warm model | PEFT folders | the zero adapter, through the policy's session |
 * | full | LoRA | a fresh adapter on the warm model folder | PEFT folders | the zero adapter, through the policy's session |
 * | LoRA | full | the merged warm model's weights | model folders | the merged warm model, loaded from its folder (a copy) |
 * | full | full | the warm model folder's weights | model folders | the warm model, loaded from its folder (a copy) |
 *
 * The "merged warm model" is the base with the warm adapter merged (`mergedDir`, written once)
 * after a LoRA warm phase, and the warm checkpoint folder itself after a full one.
 */
export interface WarmStartedPolicy {
  /** The folder the trained phase opens: its adapter's base (the base folder or the merged warm model), or the weights it starts from. */
  readonly trainedBaseDir: string;
  /** The warm phase's policy on the base folder; `checkpoint` defaults to the warm checkpoint's folder. */
  openWarm(settings?: Partial<WarmStartedOpenSettings>): Promise<OpenedPolicy>;
  /**
   * The trained phase's policy, writing the merged warm model first when it needs it.
   * `checkpoint` defaults to where the phase starts: the warm adapter when it trains that on
   * (with the warm start's Adam moments), else none.
   */
  openTrained(settings?: Partial<WarmStartedOpenSettings>): Promise<OpenedPolicy>;
  /** The merged warm model: the base with the warm adapter merged, written once, or a full warm phase's checkpoint; resolves to its folder. */
  writeMergedWarm(): Promise<string>;
  /**
   * The warm policy frozen: a KL reference that stays the warm policy while `trained` moves on
   * (a resumed run included). LoRA scores through `trained`'s own inference session, without a
   * second copy of the model: with an adapter of its own on the merged warm model, the zero
   * adapter; trained on, the warm adapter read from its folder. A full trained phase loads the
   * merged warm model from its folder into an inference session of its own (one more copy).
   */
  warmReference(trained: LocalPolicy<TrainableSet>): Promise<WarmReference>;
  /**
   * Writes the trained phase's adapter as it is now as a PEFT folder at `dir`, its base model
   * {@link trainedBaseDir} (what vLLM servers load per step). INVALID_ARGUMENT when the phase
   * trains every weight: there is no adapter to send.
   */
  saveAdapter(trained: LocalPolicy<TrainableSet>, dir: string): Promise<void>;
}

/** The phases of a warm-started policy over the folders of `settings` (see {@link WarmStartedPolicy}). */
export function createWarmStartedPolicy(settings: WarmStartedPolicySettings): WarmStartedPolicy {
  const { baseDir, warmDir, mergedDir, warm, trained } = settings;
  const continued = trainsWarmAdapterOn(warm, trained);
  const mergedWarmDir = warm.trainable.kind === 'full' ? warmDir : mergedDir;
  const openOn = (modelDir: string, trainable: TrainableSet, lora: LoraSettings | null, open: WarmStartedOpenSettings): Promise<OpenedPolicy> => {
    const common = {
      ...settings.open,
      ...(open.seed === undefined ? {} : { seed: open.seed }),
      modelDir,
      optimizerState: open.optimizerState ?? true,
      ...(open.checkpoint ? { checkpoint: open.checkpoint } : {}),
    };
    switch (trainable.kind) {
      case 'lora':
        return openLoraPolicy({ ...common, lora: lora! });
      case 'full':
        return openFullPolicy({ ...common, frozen: trainable.frozen ?? [] });
      default:
        return assertNever(trainable);
    }
  };
  const openWarm = (open: Partial<WarmStartedOpenSettings> = {}) =>
    openOn(baseDir, warm.trainable, warm.lora, { ...open, checkpoint: open.checkpoint === undefined ? warmDir : open.checkpoint });
  const writeMergedWarm = async () => {
    if (warm.trainable.kind === 'lora') {
      await writeMergedModelFolder({ baseDir, adapterDir: warmDir, outDir: mergedDir });
      return mergedDir;
    }
    restoreInterruptedFolder(warmDir);
    if (!existsSync(join(warmDir, 'config.json'))) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `The warm model is not saved yet: ${warmDir} has no config.json. Run the warm start (it saves its model there) before the phase after it.`,
        details: { dir: warmDir },
      });
    }
    return warmDir;
  };
  return {
    trainedBaseDir: continued ? baseDir : mergedWarmDir,
    openWarm,
    async openTrained(open = {}) {
      if (continued) return openWarm({ ...open, checkpoint: open.checkpoint === undefined ? warmDir : open.checkpoint });
      return openOn(await writeMergedWarm(), trained.trainable, trained.lora, { ...open, checkpoint: open.checkpoint ?? null });
    },
    writeMergedWarm,
    async warmReference(policy) {
      const { adapter, model } = policy;
      if (adapter === undefined) {
        // Full: the warm weights from their folder, not the policy's (a resume has moved them on).
        const lm = await createCausalLm({ model: await loadModel(await writeMergedWarm()), runtime: settings.open.runtime, device: settings.open.device });
        return { logprobs: async (batch) => (await lm.logprobs(batch)).logprobs, release: () => lm.release() };
      }
      const frozen = continued ? policy.frozen(await loadLoraAdapter(warmDir, model.config)) : policy.frozen(createLoraAdapter(model.config, adapter.config));
      return { logprobs: (batch) => frozen.logprobs(batch), release: async () => undefined };
    },
    async saveAdapter(policy, dir) {
      if (policy.adapter === undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `The trained policy trains every weight (trainable: full) and has no LoRA adapter to save at ${dir}; servers that load adapters (vLLM) cannot follow it: train LoRA, or roll out in-process.`,
          details: { dir },
        });
      }
      await saveLoraAdapter(dir, policy.adapter, resolve(continued ? baseDir : mergedWarmDir));
    },
  };
}
