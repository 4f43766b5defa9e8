import { AgentFlowError } from '@agentflow/core';

// Lanczos approximation of log Gamma (g = 7, 9 terms; Godfrey's coefficients, about 15 digits).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Gamma(x) for x > 0. */
function logGamma(x: number): number {
  const shifted = x - 1;
  const t = shifted + 7.5;
  let series = LANCZOS[0] as number;
  for (let term = 1; term < LANCZOS.length; term++) series += (LANCZOS[term] as number) / (shifted + term);
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(series);
}

const TINY = 1e-300;
const clampTiny = (value: number) => (Math.abs(value) < TINY ? TINY : value);

/** The continued fraction of the incomplete beta function, by the modified Lentz method (Numerical Recipes, 3rd ed., 6.4). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  let c = 1;
  let d = 1 / clampTiny(1 - ((a + b) * x) / (a + 1));
  let fraction = d;
  // Converges in O(sqrt(max(a, b))) terms: a few hundred even at a million degrees of freedom.
  for (let m = 1; m <= 10_000; m++) {
    const even = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 / clampTiny(1 + even * d);
    c = clampTiny(1 + even / c);
    fraction *= d * c;
    const odd = (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 / clampTiny(1 + odd * d);
    c = clampTiny(1 + odd / c);
    const step = d * c;
    fraction *= step;
    if (Math.abs(step - 1) < 1e-15) return fraction;
  }
  throw new AgentFlowError({
    code: 'INTERNAL',
    message: `The incomplete beta continued fraction did not converge for a=${a}, b=${b}, x=${x}.`,
    details: { a, b, x },
  });
}

/** The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]. */
function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast on the side of the mean (a + 1) / (a + b + 2); the other side by symmetry.
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(a, b, x)) / a : 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

function checkDegreesOfFreedom(degreesOfFreedom: number): void {
  if (!(degreesOfFreedom > 0) || !Number.isFinite(degreesOfFreedom)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Student's t needs finite degrees of freedom > 0, got ${degreesOfFreedom}.`,
      details: { degreesOfFreedom },
    });
  }
}

/** P(T > t) for t >= 0: half the two-sided tail, I_{df / (df + t^2)}(df / 2, 1 / 2) / 2. */
function upperTail(t: number, degreesOfFreedom: number): number {
  return 0.5 * regularizedIncompleteBeta(degreesOfFreedom / (degreesOfFreedom + t * t), degreesOfFreedom / 2, 0.5);
}

/** P(T <= t) for Student's t with `degreesOfFreedom` (any real > 0). */
export function studentTCdf(t: number, degreesOfFreedom: number): number {
  checkDegreesOfFreedom(degreesOfFreedom);
  if (Number.isNaN(t)) return Number.NaN;
  const tail = upperTail(Math.abs(t), degreesOfFreedom);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * The `p` quantile of Student's t with `degreesOfFreedom` (any real > 0): the t with
 * P(T <= t) = p. Solved by bisection on the upper tail (so p near 1 keeps its digits), to
 * about 1e-12 relative; tends to the normal quantile as the degrees of freedom grow
 * (`studentTQuantile(0.975, 4)` is 2.7764, the 95% two-sided t of five values).
 */
export function studentTQuantile(p: number, degreesOfFreedom: number): number {
  checkDegreesOfFreedom(degreesOfFreedom);
  if (!(p > 0 && p < 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `A quantile needs 0 < p < 1, got ${p}.`, details: { p } });
  }
  if (p === 0.5) return 0;
  const tail = p > 0.5 ? 1 - p : p; // [0, 0.5): the upper tail to reach
  let low = 0;
  let high = 1;
  while (upperTail(high, degreesOfFreedom) > tail) high *= 2;
  while (high - low > 1e-13 * high) {
    const middle = (low + high) / 2;
    if (middle === low || middle === high) break;
    if (upperTail(middle, degreesOfFreedom) > tail) low = middle;
    else high = middle;
  }
  const t = (low + high) / 2;
  return p > 0.5 ? t : -t;
}
