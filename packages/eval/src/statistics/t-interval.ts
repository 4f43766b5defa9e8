import { AgentFlowError } from '@agentflow/core';
import { studentTQuantile } from './student-t';

/** A mean over a few independent values (seeds) with its 95% Student-t interval. */
export interface MeanEstimate {
  /** NaN when there are no values. */
  mean: number;
  /** Null with fewer than two values (no spread to measure). */
  ci95: [number, number] | null;
  n: number;
}

/** The arithmetic mean (NaN for no values). */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * The Student-t confidence interval for the mean of `values` at `level` (0.95 by default):
 * mean -/+ t_{(1 + level) / 2, n - 1} * s / sqrt(n), with s the sample standard deviation
 * (Student 1908). It assumes independent, roughly normal values: the spread across seeds of
 * a run, not within one. Null with fewer than two values.
 */
export function tInterval(values: readonly number[], level = 0.95): [number, number] | null {
  if (!(level > 0 && level < 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `A confidence level must lie in (0, 1), got ${level}.`, details: { level } });
  }
  const n = values.length; // [n]
  if (n < 2) return null;
  const center = mean(values);
  const variance = values.reduce((sum, value) => sum + (value - center) ** 2, 0) / (n - 1);
  const half = studentTQuantile((1 + level) / 2, n - 1) * Math.sqrt(variance / n);
  return [center - half, center + half];
}

/** The mean of `values` with its 95% Student-t interval (`tInterval`). */
export function meanWithInterval(values: readonly number[]): MeanEstimate {
  return { mean: mean(values), ci95: tInterval(values), n: values.length };
}
