import { AgentFlowError, createRandom, type Random } from '@agentflow/core';

/** Settings of a nonparametric bootstrap. */
export interface BootstrapSettings {
  /** Resamples B (default 10,000: a percentile resolution of 1e-4). */
  resamples?: number;
  /** Seed or generator of the draws, so the same data give the same interval (default seed 0). */
  random?: Random | number;
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${name} must be a positive integer, got ${value}.`, details: { [name]: value } });
  }
}

/**
 * The nonparametric bootstrap (Efron 1979): `statistic` over `resamples` resamples of
 * `units` units drawn uniformly with replacement, in draw order: [resamples]. The unit is
 * what is independent (an item of a benchmark, a seed of a sweep); `statistic` gets the
 * drawn indices (length `units`, each in [0, units)) in an array reused between calls.
 */
export function bootstrapReplicates(
  units: number,
  statistic: (indices: readonly number[]) => number,
  settings: BootstrapSettings = {},
): Float64Array {
  checkCount('units', units);
  const { resamples = 10_000 } = settings;
  checkCount('resamples', resamples);
  const random = typeof settings.random === 'object' ? settings.random : createRandom(settings.random ?? 0);
  const indices = new Array<number>(units); // [units]
  const replicates = new Float64Array(resamples); // [resamples]
  for (let round = 0; round < resamples; round++) {
    // random.int(0, units - 1) without its per-call argument check: millions of draws for a large benchmark.
    for (let draw = 0; draw < units; draw++) indices[draw] = Math.floor(random.next() * units);
    replicates[round] = statistic(indices);
  }
  return replicates;
}

/**
 * The bootstrap percentile interval at `level` (0.95 by default) of `replicates`: with
 * B replicates and alpha = 1 - level, the k-th smallest and the k-th largest, where
 * k = floor((B + 1) * alpha / 2) and at least 1 (Davison & Hinkley 1997, "Bootstrap Methods
 * and their Application", eq. 5.18; Efron & Tibshirani 1993, "An Introduction to the
 * Bootstrap", 12.5 and 13.3, for B * alpha not an integer). With B = 999 and 95% that is
 * the 25th and 975th of the sorted replicates. The rule is symmetric (negating the
 * replicates negates the interval), needs no interpolation (so an infinite replicate, a goal
 * never reached, stays infinite), and always keeps at least `level` of the replicates inside.
 */
export function percentileInterval(replicates: ArrayLike<number>, level = 0.95): [number, number] {
  if (!(level > 0 && level < 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `A confidence level must lie in (0, 1), got ${level}.`, details: { level } });
  }
  const count = replicates.length;
  checkCount('replicates.length', count);
  const sorted = Float64Array.from(replicates).sort(); // [B], ascending
  // The 1e-9 keeps (B + 1) * alpha / 2 from flooring below an integer it only misses by rounding (1 - 0.9 is 0.09999...).
  const k = Math.max(1, Math.floor(((count + 1) * (1 - level)) / 2 + 1e-9));
  return [sorted[k - 1] as number, sorted[count - k] as number];
}

/** The percentile interval (`percentileInterval`) of a bootstrapped statistic (`bootstrapReplicates`). */
export function bootstrapInterval(
  units: number,
  statistic: (indices: readonly number[]) => number,
  settings: BootstrapSettings & { level?: number } = {},
): [number, number] {
  return percentileInterval(bootstrapReplicates(units, statistic, settings), settings.level);
}
