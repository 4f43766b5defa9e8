import { scheduledLearningRate } from '@agentflow/core';

/** The learning-rate schedule of a DAPO run, after its linear warm-up. */
export type LearningRateSchedule = { kind: 'constant' } | { kind: 'cosine'; minRatio: number };

/**
 * The learning rate of the update at `completedSteps` (0-based) of `totalSteps`: a linear
 * warm-up to `peak` over `warmupSteps`, then constant (DAPO section 4.1) or a half cosine
 * from the peak down to `minRatio * peak` at the last step, `totalSteps - 1` (the schedule of
 * HF's `get_cosine_schedule_with_warmup`, floored). Core's {@link scheduledLearningRate}.
 */
export function learningRateAt(
  settings: { learningRate: number; warmupSteps: number; totalSteps: number; schedule: LearningRateSchedule },
  completedSteps: number,
): number {
  const { learningRate: peak, warmupSteps, totalSteps, schedule } = settings;
  const decay =
    schedule.kind === 'constant'
      ? schedule
      : { kind: 'cosine' as const, steps: Math.max(1, totalSteps - 1 - warmupSteps), minRatio: schedule.minRatio };
  return scheduledLearningRate({ peak, warmupSteps, decay }, completedSteps);
}
