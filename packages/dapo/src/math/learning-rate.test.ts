import { describe, expect, it } from 'vitest';
import { learningRateAt } from './learning-rate';

describe('learningRateAt', () => {
  it('warms up linearly, then stays at the peak (constant) or follows a half cosine down to minRatio x peak at the last step', () => {
    const constant = { learningRate: 1e-3, warmupSteps: 4, totalSteps: 10, schedule: { kind: 'constant' as const } };
    expect([0, 1, 2, 3, 4, 9].map((step) => learningRateAt(constant, step))).toEqual([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3]);
    const cosine = { learningRate: 5e-3, warmupSteps: 0, totalSteps: 30, schedule: { kind: 'cosine' as const, minRatio: 0.1 } };
    expect(learningRateAt(cosine, 0)).toBeCloseTo(5e-3, 12);
    // Half way (step 14.5 of 0..29) the rate is the mean of the peak and the floor.
    expect((learningRateAt(cosine, 14) + learningRateAt(cosine, 15)) / 2).toBeCloseTo(5e-3 * 0.55, 5);
    expect(learningRateAt(cosine, 29)).toBeCloseTo(5e-4, 12);
    expect(learningRateAt(cosine, 40)).toBeCloseTo(5e-4, 12);
    const rates = Array.from({ length: 30 }, (_, step) => learningRateAt(cosine, step));
    expect(rates.every((rate, index) => index === 0 || rate < rates[index - 1]!)).toBe(true);
  });
});
