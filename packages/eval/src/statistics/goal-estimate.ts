import { type MeanEstimate, meanWithInterval } from './t-interval';

/** A mean over seeds with its t interval, and how many of the values reach a goal. */
export interface GoalEstimate {
  estimate: MeanEstimate;
  /** Values at or above the goal (equal up to rounding counts: see `meanAgainstGoal`). */
  reached: number;
}

/**
 * The mean of `values` with its 95% Student-t interval (`meanWithInterval`), and how many reach
 * `goal`: value >= goal, where a value below it by rounding alone (1e-9 of the goal's size) counts
 * as equal, so a gain of 9 tasks of 60 (100 * (38/60 - 29/60) = 14.999999999999996 points) reaches
 * a 15-point goal, as the table that prints it as +15.0 says.
 */
export function meanAgainstGoal(values: readonly number[], goal: number): GoalEstimate {
  const slack = 1e-9 * Math.max(1, Math.abs(goal));
  return { estimate: meanWithInterval(values), reached: values.filter((value) => value >= goal - slack).length };
}
