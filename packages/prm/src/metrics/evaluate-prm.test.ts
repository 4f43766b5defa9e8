import { describe, expect, it } from 'vitest';
import type { PrmExample } from '../example/prm-example';
import { evaluatePrm, labelMean } from './evaluate-prm';

function step(trajectoryId: string, taskId: string, stepIndex: number, label: number, outcomeReward: number): PrmExample {
  return {
    id: `${trajectoryId}:${stepIndex}`,
    trajectoryId,
    taskId,
    stepIndex,
    question: taskId,
    history: [],
    action: { thought: 't', action: 'python', action_input: 'x' },
    outcomeReward,
    label,
    provenance: { labeller: 'judge' },
  };
}

describe('evaluatePrm', () => {
  // Two questions, two trajectories each; steps listed out of order on purpose.
  const examples = [
    step('a', 'q1', 1, 0, 0),
    step('a', 'q1', 0, 1, 0),
    step('b', 'q1', 0, 1, 1),
    step('b', 'q1', 1, 1, 1),
    step('c', 'q2', 0, 0, 0),
    step('d', 'q2', 0, 1, 1),
  ];

  it('a PRM that reproduces the labels is perfect on every metric', () => {
    const report = evaluatePrm(
      examples,
      examples.map((example) => example.label),
      { trainingLabelMean: labelMean(examples) },
    );
    expect(report.mse).toBe(0);
    expect(report.constantPredictorMse).toBeCloseTo(2 / 9, 12); // mean 2/3: 2 zeros off by 2/3, 4 ones by 1/3
    expect(report.pearson).toBeCloseTo(1, 12);
    expect(report.spearman).toBeCloseTo(1, 12);
    expect(report.bestOfN?.min).toEqual({ accuracy: 1, randomAccuracy: 0.5, oracleAccuracy: 1, groups: 2 });
    expect(report.bestOfN?.product.accuracy).toBe(1);
    // a: first error at 1 (needs the steps re-sorted), c: at 0; b, d: none.
    expect(report.firstError).toMatchObject({ f1: 1, erroneous: 2, correct: 2 });
  });

  it('an inverted PRM fails best-of-N and first-error, and correlates negatively', () => {
    const report = evaluatePrm(
      examples,
      examples.map((example) => 1 - example.label),
      { trainingLabelMean: 0.5 },
    );
    expect(report.pearson).toBeCloseTo(-1, 12);
    // q1: a and b both have min 0 (a tie, half credit for b); q2: the wrong c wins.
    expect(report.bestOfN?.min.accuracy).toBe(0.25);
    expect(report.firstError.f1).toBe(0);
  });

  it('rejects scores that do not pair with the examples', () => {
    expect(() => evaluatePrm(examples, [0.5], { trainingLabelMean: 0.5 })).toThrow(/1 scores for 6 examples/);
  });
});
