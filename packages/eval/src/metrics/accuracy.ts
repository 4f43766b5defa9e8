import { AgentFlowError } from '@agentflow/core';

/** A proportion with its confidence interval. */
export interface ProportionEstimate {
  successes: number;
  total: number;
  /** successes / total (0 when total is 0). */
  estimate: number;
  lower: number;
  upper: number;
}

/** z for a two-sided 95% interval. */
export const Z_95 = 1.959963984540054;

/**
 * Wilson score interval for a binomial proportion (Wilson 1927): unlike the normal
 * approximation it stays inside [0, 1] and behaves at 0/n and n/n, which small benchmarks
 * (AIME has 30 items) hit often.
 */
export function wilsonInterval(successes: number, total: number, z = Z_95): ProportionEstimate {
  if (!Number.isInteger(successes) || !Number.isInteger(total) || successes < 0 || total < 0 || successes > total) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `wilsonInterval needs integers 0 <= successes <= total, got ${successes} of ${total}.`,
      details: { successes, total },
    });
  }
  if (total === 0) return { successes, total, estimate: 0, lower: 0, upper: 1 };
  const p = successes / total;
  const z2 = z * z;
  const center = (p + z2 / (2 * total)) / (1 + z2 / total);
  const half = (z / (1 + z2 / total)) * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total));
  // At 0/n and n/n the bound is exactly 0 (or 1); the formula leaves rounding noise there.
  const lower = successes === 0 ? 0 : Math.max(0, center - half);
  const upper = successes === total ? 1 : Math.min(1, center + half);
  return { successes, total, estimate: p, lower, upper };
}

/** Accuracy of a list of verdicts with its 95% Wilson interval. */
export function accuracy(correct: readonly boolean[]): ProportionEstimate {
  return wilsonInterval(correct.filter(Boolean).length, correct.length);
}
