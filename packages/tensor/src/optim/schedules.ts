import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
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

/** Linear ramp: step 0 gets learningRate / warmupSteps, step warmupSteps-1 the full rate. */
function warmupFactor(step: number, warmupSteps: number): number {
  return warmupSteps === 0 ? 1 : Math.min(1, (step + 1) / warmupSteps);
}

/** The learning rate of the optimiser step that comes after `step` steps already taken. */
export function learningRateAt(schedule: LearningRateSchedule, step: number): number {
  switch (schedule.kind) {
    case 'constant':
      return schedule.learningRate;
    case 'linear-warmup':
      return schedule.learningRate * warmupFactor(step, schedule.warmupSteps);
    case 'cosine': {
      if (step < schedule.warmupSteps) return schedule.learningRate * warmupFactor(step, schedule.warmupSteps);
      const floor = schedule.minLearningRate ?? 0;
      const progress = Math.min(1, (step - schedule.warmupSteps) / (schedule.totalSteps - schedule.warmupSteps));
      return floor + (schedule.learningRate - floor) * 0.5 * (1 + Math.cos(Math.PI * progress));
    }
    default:
      return assertNever(schedule, 'learning-rate schedule');
  }
}
