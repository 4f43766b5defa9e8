/**
 * A learning-rate schedule. `step` in {@link learningRateAt} counts optimiser steps already
 * taken (0 for the first step).
 */
export type LearningRateSchedule =
  | { kind: 'constant'; learningRate: number }
  /** Ramps linearly from learningRate/warmupSteps to learningRate over warmupSteps, then constant. */
  | { kind: 'linear-warmup'; learningRate: number; warmupSteps: number }
  /** Linear warm-up, then half-cosine decay to minLearningRate at totalSteps (Loshchilov & Hutter, SGDR, 2017). */
  | { kind: 'cosine'; learningRate: number; warmupSteps: number; totalSteps: number; minLearningRate?: number };

/** Settings for {@link createAdamW}; defaults follow Loshchilov & Hutter (2019) / PyTorch AdamW. */
export interface AdamWSettings {
  schedule: LearningRateSchedule;
  /** Default 0.9 (Kingma & Ba 2015). */
  beta1?: number;
  /** Default 0.999 (Kingma & Ba 2015). */
  beta2?: number;
  /** Default 1e-8 (Kingma & Ba 2015). */
  epsilon?: number;
  /** Decoupled weight decay, default 0.01 (PyTorch AdamW default). */
  weightDecay?: number;
  /** Clip gradients to this global L2 norm before the update; undefined or 0: no clipping. */
  maxGradNorm?: number;
  /** Parameters for which this returns false get no weight decay (biases, norms). Default: all decay. */
  decays?: (name: string) => boolean;
}

/** Settings for one {@link adamWStep}: AdamW's hyper-parameters (defaults as {@link AdamWSettings}) and this step's learning rate. */
export interface AdamWStepSettings extends Omit<AdamWSettings, 'schedule'> {
  learningRate: number;
}

/** What one optimiser step did. */
export interface OptimizerStepResult {
  /** Steps taken after this one (1 after the first). */
  step: number;
  learningRate: number;
  /** Global L2 norm of the gradients before clipping. */
  gradNorm: number;
  clipped: boolean;
}

/** The full state of an AdamW optimiser. */
export interface AdamWState {
  step: number;
  /** First and second moments by parameter name. */
  moments: Record<string, { m: Float32Array; v: Float32Array }>;
}

/** AdamW over named float32 parameters updated in place. */
export interface AdamW {
  /**
   * Updates `parameters` in place from `gradients` (same names, same lengths). `gradients`
   * are not modified (clipping scales a copy's contribution). Deterministic.
   */
  step(parameters: Readonly<Record<string, Float32Array>>, gradients: Readonly<Record<string, Float32Array>>): OptimizerStepResult;
  /** The learning rate the next step will use. */
  nextLearningRate(): number;
  getState(): AdamWState;
  setState(state: AdamWState): void;
  /** Writes `optimizer.safetensors` (moments) and `optimizer.json` (step, settings) into `directory`. */
  save(directory: string): Promise<void>;
  /** Restores what {@link AdamW.save} wrote. */
  load(directory: string): Promise<void>;
}
