import { AgentFlowError, assertNever, describeValue, scheduledLearningRate } from '@agentflow/core';
import type { LearningRateSchedule } from './optimizer-types';

function check(condition: boolean, schedule: LearningRateSchedule, what: string): void {
  if (!condition) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Learning-rate schedule ${describeValue(schedule, 200)}: ${what}.`,
      details: { schedule },
    });
  }
}

/** Validates a schedule once, at the edge. */
export function validateSchedule(schedule: LearningRateSchedule): void {
  check(Number.isFinite(schedule.learningRate) && schedule.learningRate >= 0, schedule, 'learningRate must be a finite number >= 0');
  if (schedule.kind !== 'constant') {
    check(Number.isInteger(schedule.warmupSteps) && schedule.warmupSteps >= 0, schedule, 'warmupSteps must be an integer >= 0');
  }
  if (schedule.kind === 'cosine') {
    check(
      Number.isInteger(schedule.totalSteps) && schedule.totalSteps > schedule.warmupSteps,
      schedule,
      'totalSteps must be an integer greater than warmupSteps',
    );
    const floor = schedule.minLearningRate ?? 0;
    check(floor >= 0 && floor <= schedule.learningRate, schedule, 'minLearningRate must lie in [0, learningRate]');
  }
}

/**
 * The learning rate of the optimiser step that comes after `step` steps already taken: core's
 * {@link scheduledLearningRate} with this schedule's conventions (the cosine reaches
 * `minLearningRate`, an absolute rate, at `step = totalSteps`).
 */
export function learningRateAt(schedule: LearningRateSchedule, step: number): number {
  switch (schedule.kind) {
    case 'constant':
      return schedule.learningRate;
    case 'linear-warmup':
      return scheduledLearningRate({ peak: schedule.learningRate, warmupSteps: schedule.warmupSteps, decay: { kind: 'constant' } }, step);
    case 'cosine': {
      const { learningRate: peak, warmupSteps, totalSteps } = schedule;
      const minRatio = peak === 0 ? 0 : (schedule.minLearningRate ?? 0) / peak;
      return scheduledLearningRate({ peak, warmupSteps, decay: { kind: 'cosine', steps: totalSteps - warmupSteps, minRatio } }, step);
    }
    default:
      return assertNever(schedule, 'learning-rate schedule');
  }
}
