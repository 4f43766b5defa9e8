import { createRandom } from '@agentflow/core';

/** Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom; the normal's beyond. */
const T_975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074,
  2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** A mean over seeds with its 95% t interval (null when there are fewer than two values). */
export interface MeanEstimate {
  mean: number;
  ci95: [number, number] | null;
  n: number;
}

/** The mean of `values` with a 95% Student-t interval over them: the spread across seeds, not within a run. */
export function meanWithInterval(values: readonly number[]): MeanEstimate {
  const n = values.length;
  if (n === 0) return { mean: Number.NaN, ci95: null, n };
  const mean = values.reduce((sum, value) => sum + value, 0) / n;
  if (n < 2) return { mean, ci95: null, n };
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1);
  const half = (T_975[n - 2] ?? 1.96) * Math.sqrt(variance / n);
  return { mean, ci95: [mean - half, mean + half], n };
}

/** The `q` quantile (0..1) of sorted `values`, by linear interpolation; Infinity propagates. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = q * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const [a, b] = [sorted[low] as number, sorted[high] as number];
  if (low === high || a === b) return a;
  if (!Number.isFinite(b)) return b;
  return a + (b - a) * (position - low);
}

/**
 * A statistic's 95% percentile interval under resampling of whole seeds with replacement
 * (seeds are the unit: two arms of one seed share their warm start, so they are resampled
 * together). `statistic` gets the resampled indices.
 */
export function seedBootstrap(seeds: number, statistic: (indices: readonly number[]) => number, settings: { resamples?: number; seed?: number } = {}): [number, number] {
  const random = createRandom(settings.seed ?? 0).fork('sweep-bootstrap');
  const values: number[] = [];
  for (let r = 0; r < (settings.resamples ?? 2000); r++) {
    values.push(statistic(Array.from({ length: seeds }, () => random.int(0, seeds - 1))));
  }
  values.sort((a, b) => a - b);
  return [quantile(values, 0.025), quantile(values, 0.975)];
}
