import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregateStepScores, bestOfNAccuracy } from './best-of-n';
import { firstErrorF1, firstErrorIndex } from './first-error-f1';
import { averageRanks, constantPredictorMse, meanSquaredError, pearson, spearman } from './regression';

const values = fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 2, maxLength: 30 });

describe('regression metrics', () => {
  it('MSE and the constant predictor by hand', () => {
    expect(meanSquaredError([0.5, 1, 0], [1, 1, 1])).toBeCloseTo((0.25 + 0 + 1) / 3, 12);
    // Held-out labels [0, 1, 1] against the training mean 0.5: every error is 0.5.
    expect(constantPredictorMse([0, 1, 1], 0.5)).toBeCloseTo(0.25, 12);
    expect(() => meanSquaredError([1], [1, 2])).toThrow(/1 predictions for 2 labels/);
  });

  it('Pearson by hand, and undefined for a constant side', () => {
    // x = [1,2,3], y = [2,4,7]: cov 5 / sqrt(2 * 12.6667) = 0.99339927
    expect(pearson([1, 2, 3], [2, 4, 7])).toBeCloseTo(0.9933992677987828, 12);
    expect(Number.isNaN(pearson([1, 1, 1], [1, 2, 3]))).toBe(true);
  });

  it('average ranks for ties', () => {
    expect(averageRanks([10, 20, 20, 5, 20])).toEqual([2, 4, 4, 1, 4]);
  });

  it('Spearman with ties by hand', () => {
    // Ranks of x: [1, 2.5, 2.5, 4]; of y: [1, 2, 3, 4]. Pearson of those = 0.9486833.
    expect(spearman([1, 2, 2, 3], [10, 20, 30, 40])).toBeCloseTo(0.9486832980505138, 12);
  });

  it('Spearman is 1 for any strictly increasing transform (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: -1000, max: 1000 }), { minLength: 2, maxLength: 30 }), (x) => {
        expect(spearman(x, x.map((v) => v ** 3 + 7))).toBeCloseTo(1, 9);
      }),
    );
  });

  it('Pearson stays in [-1, 1] and is symmetric (property)', () => {
    fc.assert(
      fc.property(values, values, (a, b) => {
        const n = Math.min(a.length, b.length);
        const r = pearson(a.slice(0, n), b.slice(0, n));
        if (Number.isNaN(r)) return;
        expect(Math.abs(r)).toBeLessThanOrEqual(1);
        expect(pearson(b.slice(0, n), a.slice(0, n))).toBeCloseTo(r, 9);
      }),
    );
  });

  it('the training mean minimises the constant predictor on the training labels (property)', () => {
    fc.assert(
      fc.property(values, fc.double({ min: -50, max: 50, noNaN: true }), (labels, other) => {
        const average = labels.reduce((s, v) => s + v, 0) / labels.length;
        expect(constantPredictorMse(labels, average)).toBeLessThanOrEqual(constantPredictorMse(labels, other) + 1e-9);
      }),
    );
  });
});

describe('best-of-N', () => {
  it('aggregates by min and by product; no steps scores 0', () => {
    expect(aggregateStepScores([0.9, 0.5, 0.8], 'min')).toBe(0.5);
    expect(aggregateStepScores([0.9, 0.5, 0.8], 'product')).toBeCloseTo(0.36, 12);
    expect(aggregateStepScores([], 'min')).toBe(0);
  });

  it('picks the top trajectory per question; min and product can disagree', () => {
    const trajectories = [
      // q1: A has min 0.6 product 0.36; B has min 0.5 product 0.475 (one weak step, otherwise strong).
      { groupId: 'q1', stepScores: [0.6, 0.6], correct: true },
      { groupId: 'q1', stepScores: [0.5, 0.95], correct: false },
      // q2: the correct one wins under both.
      { groupId: 'q2', stepScores: [0.9], correct: true },
      { groupId: 'q2', stepScores: [0.1], correct: false },
    ];
    expect(bestOfNAccuracy(trajectories, 'min')).toEqual({ accuracy: 1, randomAccuracy: 0.5, oracleAccuracy: 1, groups: 2 });
    expect(bestOfNAccuracy(trajectories, 'product').accuracy).toBe(0.5);
  });

  it('counts ties as the expected accuracy of a random pick among them', () => {
    const tied = [
      { groupId: 'q', stepScores: [0.7], correct: true },
      { groupId: 'q', stepScores: [0.7], correct: false },
      { groupId: 'q', stepScores: [0.2], correct: true },
    ];
    expect(bestOfNAccuracy(tied, 'min').accuracy).toBe(0.5);
  });
});

describe('first-error F1 (ProcessBench)', () => {
  it('finds the first step below the threshold', () => {
    expect(firstErrorIndex([0.9, 0.4, 0.1], 0.5)).toBe(1);
    expect(firstErrorIndex([0.9, 0.6], 0.5)).toBe(-1);
  });

  it('harmonic mean of the accuracy on erroneous and on correct trajectories', () => {
    const settings = { labelThreshold: 0.5, scoreThreshold: 0.5 };
    const result = firstErrorF1(
      [
        { labels: [1, 0, 0], scores: [0.9, 0.2, 0.1] }, // erroneous at 1, predicted 1: hit
        { labels: [1, 1, 0], scores: [0.9, 0.3, 0.1] }, // erroneous at 2, predicted 1: miss (too early)
        { labels: [1, 1], scores: [0.8, 0.9] }, // correct, predicted none: hit
        { labels: [1, 1], scores: [0.8, 0.4] }, // correct, predicted 1: miss
        { labels: [1], scores: [0.7] }, // correct: hit
      ],
      settings,
    );
    expect(result.erroneous).toBe(2);
    expect(result.correct).toBe(3);
    expect(result.erroneousAccuracy).toBe(0.5);
    expect(result.correctAccuracy).toBeCloseTo(2 / 3, 12);
    expect(result.f1).toBeCloseTo((2 * 0.5 * (2 / 3)) / (0.5 + 2 / 3), 12);
  });

  it('is 1 when scores equal labels and both subsets are present (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 6 }), {
          minLength: 1,
          maxLength: 20,
        }),
        (trajectories) => {
          const cases = [...trajectories, [1], [0]].map((labels) => ({ labels, scores: labels }));
          expect(firstErrorF1(cases, { labelThreshold: 0.5, scoreThreshold: 0.5 }).f1).toBe(1);
        },
      ),
    );
  });
});
