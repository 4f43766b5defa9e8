import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calibrationBins } from './calibration';

describe('calibrationBins', () => {
  it('bins by hand: equal widths over [0, 1], 1 in the top bin, empty bins left out', () => {
    // Five bins: [0, 0.2), [0.2, 0.4), ..., [0.8, 1]. 0.1 and 0.15 share the first; 0.9 and 1 the last.
    const bins = calibrationBins([0.1, 0.15, 0.5, 0.9, 1], [0, 1, 1, 1, 0]);
    expect(bins).toEqual([
      { predicted: 0.125, observed: 0.5, count: 2 },
      { predicted: 0.5, observed: 1, count: 1 },
      { predicted: 0.95, observed: 0.5, count: 2 },
    ]);
    // A score on an inner edge opens the next bin.
    expect(calibrationBins([0.39, 0.4], [0, 1]).map((bin) => bin.count)).toEqual([1, 1]);
    expect(calibrationBins([0.49, 0.5], [0, 1], 2).map((bin) => bin.count)).toEqual([1, 1]);
  });

  it('keeps every step once and the overall means, whatever the number of bins', () => {
    const pairs = fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1)), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(pairs, fc.integer({ min: 1, max: 12 }), (rows, count) => {
        const bins = calibrationBins(rows.map(([score]) => score), rows.map(([, label]) => label), count);
        expect(bins.length).toBeLessThanOrEqual(count);
        expect(bins.reduce((sum, bin) => sum + bin.count, 0)).toBe(rows.length);
        const observed = bins.reduce((sum, bin) => sum + bin.observed * bin.count, 0) / rows.length;
        expect(observed).toBeCloseTo(rows.reduce((sum, [, label]) => sum + label, 0) / rows.length, 9);
        for (let index = 1; index < bins.length; index++) expect(bins[index]!.predicted).toBeGreaterThanOrEqual(bins[index - 1]!.predicted);
      }),
    );
  });

  it('refuses unpaired inputs, a bad bin count and a score no sigmoid gives', () => {
    expect(() => calibrationBins([0.5], [1, 0])).toThrow(/1 scores for 2 labels/);
    expect(() => calibrationBins([0.5], [1], 0)).toThrow(/bins must be a positive integer, got 0/);
    expect(() => calibrationBins([0.5, Number.NaN], [1, 0])).toThrow(/score 1 is NaN/);
    expect(() => calibrationBins([-0.1], [1])).toThrow(/score 0 is -0.1/);
  });
});
