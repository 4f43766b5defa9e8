import { AgentFlowError } from '@agentflow/core';
import { type BootstrapSettings, bootstrapReplicates, percentileInterval } from '../statistics/bootstrap';
import { mean } from '../statistics/t-interval';
import { accuracy } from './accuracy';

export interface McNemarResult {
  /** Items A got right and B wrong. */
  onlyA: number;
  /** Items B got right and A wrong. */
  onlyB: number;
  /** Two-sided exact p-value: a binomial test on the discordant pairs (p = 1/2). */
  pValue: number;
}

export interface BootstrapResult {
  /** Mean of (B - A) over items: B's accuracy minus A's. */
  difference: number;
  /** 95% bootstrap percentile interval of the difference (the order-statistic rule of `percentileInterval`). */
  lower: number;
  upper: number;
  /** Two-sided p-value: twice the smaller share of resampled differences on either side of 0. */
  pValue: number;
  resamples: number;
}

export interface PairedComparison {
  items: number;
  accuracyA: number;
  accuracyB: number;
  mcnemar: McNemarResult;
  bootstrap: BootstrapResult;
}

/** The bootstrap's resamples (default 10,000: a p-value resolution of 1e-4) and seed (default 0). */
export type PairedComparisonSettings = BootstrapSettings;

function checkPaired(a: readonly boolean[], b: readonly boolean[]): void {
  if (a.length !== b.length || a.length === 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A paired comparison needs two non-empty runs over the same items, got ${a.length} and ${b.length} results.`,
      details: { lengthA: a.length, lengthB: b.length },
    });
  }
}

/** Exact McNemar test: under no difference each discordant item is a fair coin. */
export function mcnemarExact(a: readonly boolean[], b: readonly boolean[]): McNemarResult {
  checkPaired(a, b);
  let onlyA = 0;
  let onlyB = 0;
  a.forEach((value, index) => {
    if (value && !b[index]) onlyA++;
    else if (!value && b[index]) onlyB++;
  });
  const discordant = onlyA + onlyB;
  if (discordant === 0) return { onlyA, onlyB, pValue: 1 };
  // P(X <= min) for X ~ Binomial(discordant, 1/2), in log space for large counts.
  const smaller = Math.min(onlyA, onlyB);
  let logChoose = 0;
  let tail = 0;
  for (let count = 0; count <= smaller; count++) {
    if (count > 0) logChoose += Math.log(discordant - count + 1) - Math.log(count);
    tail += Math.exp(logChoose - discordant * Math.LN2);
  }
  return { onlyA, onlyB, pValue: Math.min(1, 2 * tail) };
}

/**
 * Paired bootstrap of B's accuracy minus A's, resampling items with replacement
 * (`bootstrapReplicates`), with the percentile interval of `percentileInterval`.
 */
export function pairedBootstrap(a: readonly boolean[], b: readonly boolean[], settings: PairedComparisonSettings = {}): BootstrapResult {
  checkPaired(a, b);
  const { resamples = 10_000 } = settings;
  const deltas = a.map((value, index) => Number(b[index]) - Number(value)); // [items]
  const count = deltas.length;
  const meanAt = (indices: readonly number[]) => {
    let sum = 0;
    for (const index of indices) sum += deltas[index] as number;
    return sum / count;
  };
  const differences = bootstrapReplicates(count, meanAt, { ...settings, resamples }); // [resamples]
  let atOrBelowZero = 0;
  let atOrAboveZero = 0;
  for (const difference of differences) {
    if (difference <= 0) atOrBelowZero++;
    if (difference >= 0) atOrAboveZero++;
  }
  const [lower, upper] = percentileInterval(differences, 0.95);
  return {
    difference: mean(deltas),
    lower,
    upper,
    pValue: Math.min(1, (2 * Math.min(atOrBelowZero, atOrAboveZero)) / resamples),
    resamples,
  };
}

/**
 * Compares two runs (A: baseline, B: candidate) on the same items in the same order:
 * both accuracies, the exact McNemar test and a seeded paired bootstrap of the difference.
 */
export function comparePairedRuns(a: readonly boolean[], b: readonly boolean[], settings: PairedComparisonSettings = {}): PairedComparison {
  checkPaired(a, b);
  return {
    items: a.length,
    accuracyA: accuracy(a).estimate,
    accuracyB: accuracy(b).estimate,
    mcnemar: mcnemarExact(a, b),
    bootstrap: pairedBootstrap(a, b, settings),
  };
}
