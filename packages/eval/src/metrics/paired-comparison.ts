import { AgentFlowError, createRandom, type Random } from '@agentflow/core';

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
  /** 95% percentile interval of the difference over resamples. */
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

export interface PairedComparisonSettings {
  /** Bootstrap resamples (default 10,000: a p-value resolution of 1e-4). */
  resamples?: number;
  /** Seed or generator for the bootstrap, so the same runs give the same interval (default seed 0). */
  random?: Random | number;
}

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

/** Paired bootstrap of B's accuracy minus A's, resampling items with replacement. */
export function pairedBootstrap(a: readonly boolean[], b: readonly boolean[], settings: PairedComparisonSettings = {}): BootstrapResult {
  checkPaired(a, b);
  const { resamples = 10_000 } = settings;
  if (!Number.isInteger(resamples) || resamples < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `resamples must be a positive integer, got ${resamples}.` });
  }
  const random = typeof settings.random === 'object' ? settings.random : createRandom(settings.random ?? 0);
  const deltas = a.map((value, index) => Number(b[index]) - Number(value)); // [items]
  const count = deltas.length;
  const difference = deltas.reduce((sum, value) => sum + value, 0) / count;
  const differences = new Float64Array(resamples); // [resamples]
  let atOrBelowZero = 0;
  let atOrAboveZero = 0;
  for (let round = 0; round < resamples; round++) {
    let sum = 0;
    for (let draw = 0; draw < count; draw++) sum += deltas[Math.floor(random.next() * count)] as number;
    const mean = sum / count;
    differences[round] = mean;
    if (mean <= 0) atOrBelowZero++;
    if (mean >= 0) atOrAboveZero++;
  }
  differences.sort();
  const at = (quantile: number) => differences[Math.min(resamples - 1, Math.max(0, Math.floor(quantile * resamples)))] as number;
  return {
    difference,
    lower: at(0.025),
    upper: at(0.975),
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
  const accuracyOf = (run: readonly boolean[]) => run.filter(Boolean).length / run.length;
  return {
    items: a.length,
    accuracyA: accuracyOf(a),
    accuracyB: accuracyOf(b),
    mcnemar: mcnemarExact(a, b),
    bootstrap: pairedBootstrap(a, b, settings),
  };
}
