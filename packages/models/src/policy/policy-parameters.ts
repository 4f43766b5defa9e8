import type { TrainablePolicy } from '@agentflow/core';
import type { LoraAdapter } from '../lora/lora-adapter';

/** Files written into a checkpoint folder beside the parameters: their names, and how to write them there. */
export interface FolderCompanion {
  files: readonly string[];
  write(dir: string): Promise<void>;
}

/**
 * What a local policy trains, as the rest of the policy sees it: the arrays the optimiser
 * updates in place, how a training step's gradients map onto them, and how they are frozen,
 * saved and loaded. One implementation per kind of TrainableSet (`lora-parameters.ts`,
 * `full-parameters.ts`).
 */
export interface PolicyParameters {
  /** The LoRA adapter fed to every session; undefined when the base weights train. */
  readonly adapter: LoraAdapter | undefined;
  /** Base weights that train, by Hugging Face name (none with LoRA). */
  readonly weightNames: readonly string[];
  /** Trained arrays by optimiser name (PEFT key, or weight name), viewing the live arrays. */
  readonly parameters: Readonly<Record<string, Float32Array>>;
  /** A training step's gradients (by LoRA input or weight name) by optimiser name; the arrays are shared. */
  gradients(step: ReadonlyMap<string, Float32Array>): Map<string, Float32Array>;
  /** Log-probs under a copy of the parameters as they are now (or, with LoRA, under `adapter`). */
  frozen(adapter?: LoraAdapter): Pick<TrainablePolicy, 'logprobs'>;
  /**
   * Writes the parameters into `dir` and, in the same folder, the files `alongside` writes (the
   * optimiser state). A full model folder lands with them atomically (saveModelFolder's
   * `alongside`); an adapter is written first, then they.
   */
  save(dir: string, alongside: FolderCompanion): Promise<void>;
  /** Reads what {@link PolicyParameters.save} wrote into the live arrays, in place. */
  load(dir: string): Promise<void>;
  /** Releases sessions of its own (frozen copies). */
  release(): Promise<void>;
}
