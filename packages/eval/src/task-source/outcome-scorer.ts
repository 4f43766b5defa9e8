import type { Trajectory } from '@agentflow/core';
import type { TaskItem, TaskSource } from './task-source';

/** What an outcome scorer says of one trajectory: the shape `@agentflow/dapo`'s `scoreOutcome` returns. */
export interface TaskOutcome {
  /** The task source's reward of the trajectory's final answer (1 right, 0 wrong for the built-in sources). */
  reward: number;
  /** True when the reward is at least 1. */
  correct: boolean;
}

export interface OutcomeScorerSettings {
  /**
   * Told of every scored trajectory with its reward, after scoring: for example a cross-task
   * memory's `remember`, so that solved training tasks are kept (`@agentflow/flow`).
   */
  onScored?: (trajectory: Trajectory, reward: number) => unknown;
}

/**
 * The outcome reward of a task source as a trainer asks for it: the reward of the trajectory's
 * final answer (none is a wrong answer, never a throw), `correct` when it is at least 1. Hand
 * it to `createDapoTrainer({ scoreOutcome })`.
 */
export function createOutcomeScorer(
  source: Pick<TaskSource, 'reward'>,
  settings: OutcomeScorerSettings = {},
): (item: TaskItem, trajectory: Trajectory) => Promise<TaskOutcome> {
  return async (item, trajectory) => {
    const reward = await source.reward(item, trajectory.answer ?? undefined);
    await settings.onScored?.(trajectory, reward);
    return { reward, correct: reward >= 1 };
  };
}
