import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Z_95 } from '../metrics/accuracy';
import { studentTCdf, studentTQuantile } from './student-t';
import { mean, meanWithInterval, tInterval } from './t-interval';

describe("Student's t", () => {
  it('matches published 97.5% quantiles', () => {
    // Two-sided 95% critical values (R: qt(0.975, df)).
    const published: Array<[number, number]> = [
      [1, 12.706204736174705],
      [2, 4.302652729749464],
      [4, 2.7764451051977934],
      [10, 2.2281388519862744],
      [30, 2.0422724563012373],
      [100, 1.9839715184496334],
    ];
    for (const [degreesOfFreedom, t] of published) expect(studentTQuantile(0.975, degreesOfFreedom)).toBeCloseTo(t, 9);
    expect(studentTQuantile(0.995, 1)).toBeCloseTo(63.65674116287399, 7);
    // Many degrees of freedom: the normal quantile.
    expect(studentTQuantile(0.975, 1e6)).toBeCloseTo(Z_95, 5);
    expect(studentTQuantile(0.5, 3)).toBe(0);
    expect(() => studentTQuantile(1, 3)).toThrow(/0 < p < 1, got 1/);
    expect(() => studentTQuantile(0.9, 0)).toThrow(/degrees of freedom > 0, got 0/);
  });

  it('agrees with the closed forms at 1 and 2 degrees of freedom', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 0.999, noNaN: true }), (p) => {
        const cauchy = Math.tan(Math.PI * (p - 0.5));
        const two = (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
        return Math.abs(studentTQuantile(p, 1) - cauchy) <= 1e-9 * Math.max(1, Math.abs(cauchy)) && Math.abs(studentTQuantile(p, 2) - two) <= 1e-9 * Math.max(1, Math.abs(two));
      }),
    );
  });

  it('inverts its distribution function, symmetric about 0, and narrows as the degrees of freedom grow', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.0005, max: 0.9995, noNaN: true }), fc.double({ min: 0.5, max: 500, noNaN: true }), (p, degreesOfFreedom) => {
        const t = studentTQuantile(p, degreesOfFreedom);
        return (
          Math.abs(studentTCdf(t, degreesOfFreedom) - p) <= 1e-10 &&
          Math.abs(studentTQuantile(1 - p, degreesOfFreedom) + t) <= 1e-9 * Math.max(1, Math.abs(t)) &&
          Math.abs(studentTQuantile(p, degreesOfFreedom + 1)) <= Math.abs(t) + 1e-12
        );
      }),
    );
  });
});

describe('the t interval', () => {
  it('gives the mean with a Student-t interval over seeds', () => {
    // Five gains of the robust-learning issue: mean 4.66, s = 6.597, t(4) = 2.776.
    const estimate = meanWithInterval([0, 13.3, 10, -1.7, 1.7]);
    expect(estimate.mean).toBeCloseTo(4.66, 2);
    expect(estimate.ci95![0]).toBeCloseTo(4.66 - (2.776 * 6.5972) / Math.sqrt(5), 2);
    expect(estimate.ci95![1]).toBeCloseTo(4.66 + (2.776 * 6.5972) / Math.sqrt(5), 2);
    expect(meanWithInterval([3])).toEqual({ mean: 3, ci95: null, n: 1 });
    expect(meanWithInterval([]).ci95).toBeNull();
    expect(mean([])).toBeNaN();
    expect(() => tInterval([1, 2], 1)).toThrow(/level must lie in \(0, 1\), got 1/);
  });

  it('is centred on the mean, contains it, widens with the level, and moves with a shift and a scale', () => {
    const values = fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 2, maxLength: 40 });
    fc.assert(
      fc.property(values, fc.double({ min: -100, max: 100, noNaN: true }), fc.double({ min: 0.1, max: 10, noNaN: true }), (sample, shift, scale) => {
        const [lower, upper] = tInterval(sample)!;
        const center = mean(sample);
        const [lower80, upper80] = tInterval(sample, 0.8)!;
        const [movedLower, movedUpper] = tInterval(sample.map((value) => scale * value + shift))!;
        const tolerance = 1e-9 * (1 + Math.abs(center) + (upper - lower)) * (1 + scale);
        return (
          lower <= center + tolerance &&
          center <= upper + tolerance &&
          Math.abs(center - lower - (upper - center)) <= tolerance &&
          lower <= lower80 + tolerance &&
          upper80 <= upper + tolerance &&
          Math.abs(movedLower - (scale * lower + shift)) <= tolerance * 10 &&
          Math.abs(movedUpper - (scale * upper + shift)) <= tolerance * 10
        );
      }),
    );
  });
});
