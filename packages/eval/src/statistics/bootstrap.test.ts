import { createRandom } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrapInterval, bootstrapReplicates, percentileInterval } from './bootstrap';

const replicateArrays = fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 300 });
const levels = fc.double({ min: 0.5, max: 0.99, noNaN: true });

describe('the bootstrap percentile interval', () => {
  it('takes the order statistics at (B + 1) alpha / 2 from each end', () => {
    // B = 999 at 95%: the 25th and the 975th smallest (Davison & Hinkley 1997, eq. 5.18).
    const replicates = Array.from({ length: 999 }, (_, index) => 999 - index); // 999 ... 1, unsorted on purpose
    expect(percentileInterval(replicates)).toEqual([25, 975]);
    // B = 2000: floor(2001 * 0.025) = 50, the 50th smallest and the 50th largest (the 1951st smallest).
    expect(percentileInterval(Array.from({ length: 2000 }, (_, index) => index + 1))).toEqual([50, 1951]);
    // 90% with B = 199 is the 10th from each end, not the 9th that rounding 0.1 would give.
    expect(percentileInterval(Array.from({ length: 199 }, (_, index) => index + 1), 0.9)).toEqual([10, 190]);
    // Too few replicates for the level: the extremes.
    expect(percentileInterval([3, 1, 2])).toEqual([1, 3]);
    // A goal never reached is an infinite replicate, and stays infinite.
    expect(percentileInterval([0.2, 0.4, Number.POSITIVE_INFINITY])).toEqual([0.2, Number.POSITIVE_INFINITY]);
    expect(() => percentileInterval([])).toThrow(/replicates.length must be a positive integer, got 0/);
    expect(() => percentileInterval([1], 95)).toThrow(/level must lie in \(0, 1\), got 95/);
  });

  it('is symmetric, equivariant, made of replicates, and keeps at least the level inside', () => {
    fc.assert(
      fc.property(replicateArrays, levels, (replicates, level) => {
        const [lower, upper] = percentileInterval(replicates, level);
        const [negatedLower, negatedUpper] = percentileInterval(
          replicates.map((value) => -value),
          level,
        );
        const [shiftedLower, shiftedUpper] = percentileInterval(
          replicates.map((value) => 2 * value + 1),
          level,
        );
        const inside = replicates.filter((value) => value >= lower && value <= upper).length;
        return (
          lower <= upper &&
          replicates.includes(lower) &&
          replicates.includes(upper) &&
          negatedLower === -upper &&
          negatedUpper === -lower &&
          shiftedLower === 2 * lower + 1 &&
          shiftedUpper === 2 * upper + 1 &&
          inside >= level * replicates.length
        );
      }),
    );
  });
});

describe('the bootstrap', () => {
  it('resamples units with replacement, reproducibly from a seed', () => {
    const seen: number[][] = [];
    const replicates = bootstrapReplicates(
      4,
      (indices) => {
        seen.push([...indices]);
        return indices.reduce((sum, index) => sum + index, 0);
      },
      { resamples: 50, random: 7 },
    );
    expect(replicates).toHaveLength(50);
    expect(seen.every((indices) => indices.length === 4 && indices.every((index) => Number.isInteger(index) && index >= 0 && index < 4))).toBe(true);
    // Draws are uniform over units: random.int(0, units - 1), one per unit per resample.
    const random = createRandom(7);
    expect(seen[0]).toEqual([0, 1, 2, 3].map(() => random.int(0, 3)));
    expect(bootstrapReplicates(4, (indices) => indices.reduce((sum, index) => sum + index, 0), { resamples: 50, random: createRandom(7) })).toEqual(replicates);
    expect(() => bootstrapReplicates(0, () => 0)).toThrow(/units must be a positive integer, got 0/);
    expect(() => bootstrapReplicates(3, () => 0, { resamples: 1.5 })).toThrow(/resamples must be a positive integer, got 1.5/);
  });

  it('brackets the mean of the resampled units', () => {
    // The mean index of 5 units is 2; its bootstrap interval lies inside [0, 4] around it.
    const interval = bootstrapInterval(5, (indices) => indices.reduce((sum, i) => sum + i, 0) / indices.length, { resamples: 500 });
    expect(interval[0]).toBeGreaterThanOrEqual(0);
    expect(interval[0]).toBeLessThan(2);
    expect(interval[1]).toBeGreaterThan(2);
    expect(interval[1]).toBeLessThanOrEqual(4);
    // A statistic that ignores the draw has a degenerate interval.
    expect(bootstrapInterval(7, () => 0.3, { resamples: 100 })).toEqual([0.3, 0.3]);
  });
});
