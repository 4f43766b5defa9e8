import { AgentFlowError, describeValue } from '@agentflow/core';

/** How a group's spread is measured: Bessel-corrected (n - 1, TRL and verl) or population (n). */
export type StdEstimator = 'bessel' | 'population';

/** Throws a clear error when any value is not a finite number. */
export function assertFinite(values: ArrayLike<number>, what: string): void {
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (!Number.isFinite(value)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${what}[${index}] must be a finite number, got ${describeValue(value)}.`,
        details: { what, index, value },
      });
    }
  }
}

/** Arithmetic mean; 0 for an empty input. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (let index = 0; index < values.length; index++) sum += values[index] as number;
  return sum / values.length;
}

/**
 * Standard deviation with the chosen estimator. Bessel's correction is undefined for one
 * value; that case returns 0 (a lone sample carries no spread).
 */
export function standardDeviation(values: ArrayLike<number>, estimator: StdEstimator): number {
  const count = values.length;
  const denominator = estimator === 'bessel' ? count - 1 : count;
  if (denominator <= 0) return 0;
  const center = mean(values);
  let sumOfSquares = 0;
  for (let index = 0; index < count; index++) {
    const deviation = (values[index] as number) - center;
    sumOfSquares += deviation * deviation;
  }
  return Math.sqrt(sumOfSquares / denominator);
}

/** A standardised copy of the values: (x - mean) / (std + eps), or x - mean when `scaleByStd` is off. */
export function standardize(
  values: ArrayLike<number>,
  settings: { stdEstimator: StdEstimator; eps: number; scaleByStd?: boolean },
): Float64Array {
  const center = mean(values);
  const scale = settings.scaleByStd === false ? 1 : standardDeviation(values, settings.stdEstimator) + settings.eps;
  const result = new Float64Array(values.length);
  // A zero scale (eps 0 and no spread) means every value equals the mean: advantage 0.
  for (let index = 0; index < values.length; index++) {
    const deviation = (values[index] as number) - center;
    result[index] = scale === 0 ? 0 : deviation / scale;
  }
  return result;
}
