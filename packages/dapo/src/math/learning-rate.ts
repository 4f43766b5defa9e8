/** The learning-rate schedule of a DAPO run, after its linear warm-up. */
export type LearningRateSchedule = { kind: 'constant' } | { kind: 'cosine'; minRatio: number };

/**
 * The learning rate of the update at `completedSteps` (0-based) of `totalSteps`: a linear
 * warm-up to `peak` over `warmupSteps`, then constant (DAPO section 4.1) or a half cosine
 * from the peak down to `minRatio * peak` at the last step (the schedule of HF's
 * `get_cosine_schedule_with_warmup`, floored).
 */
export function learningRateAt(
  settings: { learningRate: number; warmupSteps: number; totalSteps: number; schedule: LearningRateSchedule },
  completedSteps: number,
): number {
  const { learningRate: peak, warmupSteps, totalSteps, schedule } = settings;
  if (completedSteps < warmupSteps) return (peak * (completedSteps + 1)) / warmupSteps;
  if (schedule.kind === 'constant') return peak;
  const span = Math.max(1, totalSteps - 1 - warmupSteps);
  const progress = Math.min(1, (completedSteps - warmupSteps) / span);
  return peak * (schedule.minRatio + (1 - schedule.minRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
