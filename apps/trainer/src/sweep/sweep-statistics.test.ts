import { describe, expect, it } from 'vitest';
import { parseSeeds } from './sweep-plan';
import { meanWithInterval, quantile, seedBootstrap } from './sweep-statistics';

describe('sweep statistics', () => {
  it('gives the mean with a Student-t interval over seeds', () => {
    // Five gains of the robust-learning issue: mean 4.66, s = 6.597, t(4) = 2.776.
    const estimate = meanWithInterval([0, 13.3, 10, -1.7, 1.7]);
    expect(estimate.mean).toBeCloseTo(4.66, 2);
    expect(estimate.ci95![0]).toBeCloseTo(4.66 - (2.776 * 6.5972) / Math.sqrt(5), 2);
    expect(estimate.ci95![1]).toBeCloseTo(4.66 + (2.776 * 6.5972) / Math.sqrt(5), 2);
    expect(meanWithInterval([3])).toEqual({ mean: 3, ci95: null, n: 1 });
    expect(meanWithInterval([]).ci95).toBeNull();
  });

  it('interpolates quantiles and keeps infinity for a goal never reached', () => {
    expect(quantile([0, 1, 2, 3], 0.5)).toBe(1.5);
    expect(quantile([0.2, 0.4, Number.POSITIVE_INFINITY], 0.975)).toBe(Number.POSITIVE_INFINITY);
    const interval = seedBootstrap(5, (indices) => indices.reduce((sum, i) => sum + i, 0) / indices.length, { resamples: 500 });
    expect(interval[0]).toBeGreaterThanOrEqual(0);
    expect(interval[0]).toBeLessThan(2);
    expect(interval[1]).toBeGreaterThan(2);
    expect(interval[1]).toBeLessThanOrEqual(4);
  });

  it('parses seed lists and ranges', () => {
    expect(parseSeeds('0-4')).toEqual([0, 1, 2, 3, 4]);
    expect(parseSeeds('3, 0-1,3')).toEqual([3, 0, 1]);
    expect(() => parseSeeds('a')).toThrow(/--seeds "a": expected seeds like 0-4/);
    expect(() => parseSeeds('0-100000')).toThrow(/ranges low-high of at most 1000/);
  });
});
