import { type MeanEstimate, meanWithInterval } from './t-interval';

/** A mean over seeds with its t interval, and how many of the values reach a goal. */
export interface GoalEstimate {
  estimate: MeanEstimate;
  /** Values at or above the goal. */
  reached: number;
}

/** The mean of `values` with its 95% Student-t interval (`meanWithInterval`), and how many reach `goal` (value >= goal). */
export function meanAgainstGoal(values: readonly number[], goal: number): GoalEstimate {
  return { estimate: meanWithInterval(values), reached: values.filter((value) => value >= goal).length };
}
