import { describe, expect, it } from 'vitest';
import { heldOutAccuracyCurve } from './held-out-curve';

const base = { totalSteps: 6, evaluateEvery: 2, groupSize: 4, groupsPerStep: 2, evaluationTasks: 4 };

describe('heldOutAccuracyCurve', () => {
  it('runs from the accuracy before training to the one after, through the evaluations, counting rollouts', () => {
    const curve = heldOutAccuracyCurve({
      ...base,
      before: [true, false, false, false, true],
      after: [true, true, true, false],
      // Step 2 generated three groups (dynamic sampling); the others the default two.
      trainSteps: [{ step: 2, groupsGenerated: 3 }, { step: 1 }, { step: 3 }, { step: 4 }, { step: 5 }, { step: 6 }],
      evaluations: [
        { step: 2, accuracy: 0.5 },
        { step: 4, accuracy: 0.5 },
        { step: 6, accuracy: 1 },
      ],
    });
    // before is cut to the four evaluation tasks (1 of 4); the evaluation at totalSteps is the after point.
    expect(curve).toEqual([
      { step: 0, rollouts: 0, accuracy: 0.25 },
      { step: 2, rollouts: 20, accuracy: 0.5 },
      { step: 4, rollouts: 36, accuracy: 0.5 },
      { step: 6, rollouts: 52, accuracy: 0.75 },
    ]);
  });

  it('holds the final accuracy at the evaluation steps after an early stop', () => {
    const curve = heldOutAccuracyCurve({ ...base, before: [false], after: [true], trainSteps: [{ step: 1 }, { step: 2 }], evaluations: [{ step: 2, accuracy: 0.5 }] });
    expect(curve.map((point) => [point.step, point.rollouts, point.accuracy])).toEqual([
      [0, 0, 0],
      [2, 16, 0.5],
      [4, 16, 1],
      [6, 16, 1],
    ]);
  });

  it('leaves a point without verdicts as NaN, and refuses a step count that is not an integer', () => {
    expect(heldOutAccuracyCurve({ ...base, evaluateEvery: 0, before: [], after: [], trainSteps: [], evaluations: [] })).toEqual([
      { step: 0, rollouts: 0, accuracy: Number.NaN },
      { step: 6, rollouts: 0, accuracy: Number.NaN },
    ]);
    expect(() => heldOutAccuracyCurve({ ...base, totalSteps: 1.5, before: [], after: [], trainSteps: [], evaluations: [] })).toThrow(/totalSteps and evaluateEvery must be non-negative integers, got 1.5 and 2/);
  });
});
