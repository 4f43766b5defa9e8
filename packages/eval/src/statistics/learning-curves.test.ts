import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meanAgainstGoal } from './goal-estimate';
import { compareLearningCurves, compareLearningCurvesBySeed, type LearningCurve, meanLearningCurve, stepToReach } from './learning-curves';
import { skillScore } from './skill-score';

const curve = (...accuracies: number[]): LearningCurve => accuracies.map((accuracy, step) => ({ step, rollouts: 8 * step, accuracy }));

describe('learning curves over seeds', () => {
  it('averages the steps every run evaluated, with a t band', () => {
    const mean = meanLearningCurve([curve(0.2, 0.4, 0.6), curve(0.4, 0.6), []]);
    expect(mean.map((point) => point.step)).toEqual([0, 1]);
    expect(mean[1]).toMatchObject({ step: 1, rollouts: 8, accuracy: { n: 2 } });
    expect(mean[1]!.accuracy.mean).toBeCloseTo(0.5, 12);
    expect(meanLearningCurve([])).toEqual([]);
  });

  it('finds the step at which the candidate reaches the baseline, with a seed-bootstrap interval', () => {
    // Baseline ends at 0.5 on average; the candidate's mean curve (0.3, 0.5, 0.7) reaches it at step 1 of 2.
    const comparison = compareLearningCurves([curve(0.2, 0.4, 0.6), curve(0.4, 0.6, 0.8)], [curve(0.2, 0.3, 0.4), curve(0.4, 0.5, 0.6)], {
      totalSteps: 2,
      resamples: 500,
    });
    expect(comparison).toMatchObject({ baselineFinal: 0.5, candidateStep: 1, ratio: 0.5 });
    expect(comparison.ratio95[0]).toBeLessThanOrEqual(0.5);
    expect(comparison.ratio95[1]).toBeGreaterThanOrEqual(0.5);
    expect(comparison.finalDifference.mean).toBeCloseTo(20, 9);
    // Never reached: an infinite ratio, kept as such by the percentile interval.
    const never = compareLearningCurves([curve(0.1, 0.1)], [curve(0.5, 0.9)], { totalSteps: 1, resamples: 50 });
    expect(never).toMatchObject({ candidateStep: null, ratio: Number.POSITIVE_INFINITY, ratio95: [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY] });
    expect(() => compareLearningCurves([curve(0.1)], [], { totalSteps: 1 })).toThrow(/same seeds from both arms, got 1 and 0/);
  });

  it('compared with itself, reaches its own final accuracy by the last step, with no difference', () => {
    const runs = fc
      .integer({ min: 1, max: 6 })
      .chain((steps) => fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: steps, maxLength: steps }), { minLength: 1, maxLength: 5 }));
    fc.assert(
      fc.property(runs, (accuracies) => {
        const curves = accuracies.map((run) => curve(...run));
        const same = compareLearningCurves(curves, curves, { totalSteps: 10, resamples: 20 });
        return same.finalDifference.mean === 0 && same.candidateStep !== null && same.ratio <= 0.1 * (curves[0]!.length - 1) && same.ratio95[0] <= same.ratio95[1];
      }),
    );
  });
});

describe('steps to reach and comparisons paired by seed', () => {
  it("finds the first step at which the mean curve reaches a target, up to rounding", () => {
    expect(stepToReach([curve(0.2, 0.4, 0.6), curve(0.4, 0.6, 0.8)], 0.5)).toBe(1);
    expect(stepToReach([curve(0.3 - 1e-13)], 0.3)).toBe(0);
    expect(stepToReach([curve(0.2, 0.4)], 0.9)).toBeNull();
    expect(stepToReach([], 0)).toBeNull();
  });

  it("pairs a seed's runs of both arms, in the candidate's order, and compares them as compareLearningCurves does", () => {
    const candidate = [
      { seed: 2, curve: curve(0.4, 0.6, 0.8), totalSteps: 2 },
      { seed: 1, curve: curve(0.2, 0.4, 0.6), totalSteps: 2 },
      { seed: 5, curve: curve(0.9, 0.9, 0.9), totalSteps: 2 },
    ];
    const baseline = [
      { seed: 1, curve: curve(0.2, 0.3, 0.4), totalSteps: 2 },
      { seed: 2, curve: curve(0.4, 0.5, 0.6), totalSteps: 2 },
      { seed: 7, curve: curve(0, 0, 0), totalSteps: 2 },
    ];
    const paired = compareLearningCurvesBySeed(candidate, baseline, { resamples: 200, random: 3 })!;
    const direct = compareLearningCurves([candidate[0]!.curve, candidate[1]!.curve], [baseline[1]!.curve, baseline[0]!.curve], { totalSteps: 2, resamples: 200, random: 3 });
    expect(paired).toEqual({ ...direct, seeds: [2, 1], totalSteps: 2 });
    expect(paired).toMatchObject({ baselineFinal: 0.5, candidateStep: 1, ratio: 0.5 });
    expect(compareLearningCurvesBySeed(candidate, [{ seed: 9, curve: curve(0.1), totalSteps: 2 }])).toBeUndefined();
    expect(compareLearningCurvesBySeed([], baseline)).toBeUndefined();
  });
});

describe('a mean against a goal', () => {
  it('gives the mean with its t interval and how many values reach the goal', () => {
    const { estimate, reached } = meanAgainstGoal([10, 15, 20], 15);
    expect(estimate).toMatchObject({ mean: 15, n: 3 });
    expect(estimate.ci95![0]).toBeLessThan(15);
    expect(reached).toBe(2);
    expect(meanAgainstGoal([], 1)).toEqual({ estimate: { mean: Number.NaN, ci95: null, n: 0 }, reached: 0 });
  });

  it('counts a value equal to the goal but for rounding as reaching it, and nothing further below', () => {
    // 9 more tasks of 60 answered: +15.0 points as a table prints it, 14.999999999999996 in floating point.
    const gain = 100 * (38 / 60 - 29 / 60);
    expect(gain).toBeLessThan(15);
    expect(meanAgainstGoal([gain, 100 * (39 / 60 - 30 / 60)], 15).reached).toBe(2);
    expect(meanAgainstGoal([14.99, 15 - 1e-6, 100 * (37 / 60 - 29 / 60)], 15).reached).toBe(0);
  });
});

describe('the skill score', () => {
  it("is the share of the reference's error removed", () => {
    expect(skillScore(0.06, 0.1)).toBeCloseTo(0.4, 12);
    expect(skillScore(0.1, 0.1)).toBe(0);
    expect(skillScore(0.2, 0.1)).toBeCloseTo(-1, 12);
    expect(skillScore(0, 0)).toBeNaN();
    fc.assert(fc.property(fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 1e-6, max: 10, noNaN: true }), (error, reference) => skillScore(error, reference) <= 1));
  });
});
