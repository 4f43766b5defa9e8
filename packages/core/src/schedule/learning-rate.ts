import { assertNever } from '../errors/agentflow-error';

/** What the learning rate does after the warm-up of a {@link WarmupDecaySchedule}. */
export type LearningRateDecay =
  /** The peak to the end. */
  | { kind: 'constant' }
  /**
   * A half cosine (SGDR, Loshchilov & Hutter 2017) from the peak at step `warmupSteps` down to
   * `minRatio` x the peak at step `warmupSteps + steps`, held there after. `steps` >= 1.
   */
  | { kind: 'cosine'; steps: number; minRatio: number };

/** A learning-rate schedule over optimiser steps counted from 0. */
export interface WarmupDecaySchedule {
  /** The peak learning rate, reached on the last warm-up step. */
  peak: number;
  /** Linear warm-up: step s < warmupSteps gets peak x (s + 1) / warmupSteps; 0: none. */
  warmupSteps: number;
  decay: LearningRateDecay;
}

/**
 * The learning rate of step `step` (0-based): the one definition of the warm-up and the
 * cosine decay that tensor's optimiser, dapo's loop and models' supervised fine-tuning share.
 * Callers differ only in where the cosine ends (`decay.steps`) and in how they state the floor
 * (`decay.minRatio`), which they map onto these settings.
 */
export function scheduledLearningRate(schedule: WarmupDecaySchedule, step: number): number {
  const { peak, warmupSteps, decay } = schedule;
  if (step < warmupSteps) return (peak * (step + 1)) / warmupSteps;
  switch (decay.kind) {
    case 'constant':
      return peak;
    case 'cosine': {
      const progress = Math.min(1, (step - warmupSteps) / decay.steps);
      return peak * (decay.minRatio + (1 - decay.minRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
    }
    default:
      return assertNever(decay, 'learning-rate decay');
  }
}
