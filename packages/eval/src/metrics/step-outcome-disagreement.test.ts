import { describe, expect, it } from 'vitest';
import { stepOutcomeDisagreement } from './step-outcome-disagreement';

describe('stepOutcomeDisagreement', () => {
  it('counts successes with a bad step and failures with a good step, by hand', () => {
    const result = stepOutcomeDisagreement([
      { outcome: 1, stepLabels: [0.9, 0.75, 1] }, // success, all good
      { outcome: 1, stepLabels: [0.8, 0.25, 1] }, // success with a bad step (0.25)
      { outcome: 1, stepLabels: [0.5, 0.5] }, // success: 0.5 is good
      { outcome: 0, stepLabels: [0.75, 0, 0] }, // failure with a good step (0.75)
      { outcome: 0, stepLabels: [0.25, 0.49] }, // failure, all bad
      { outcome: 1, stepLabels: [] }, // nothing labelled: left out
    ]);
    // 1 of 3 labelled successes holds a bad step; 1 of 2 failures holds a good one.
    expect(result).toEqual({ successful: 3, failed: 2, successfulWithBadStep: 1 / 3, failedWithGoodStep: 1 / 2 });
  });

  it('takes other thresholds, and says null where no trajectory of an outcome was labelled', () => {
    const trajectories = [
      { outcome: 1, stepLabels: [0.6, 0.9] },
      { outcome: 1, stepLabels: [0.95, 0.9] },
    ];
    expect(stepOutcomeDisagreement(trajectories)).toEqual({ successful: 2, failed: 0, successfulWithBadStep: 0, failedWithGoodStep: null });
    expect(stepOutcomeDisagreement(trajectories, { goodThreshold: 0.8 })).toMatchObject({ successfulWithBadStep: 0.5 });
    expect(stepOutcomeDisagreement(trajectories, { successThreshold: 2 })).toEqual({ successful: 0, failed: 2, successfulWithBadStep: null, failedWithGoodStep: 1 });
    expect(stepOutcomeDisagreement([])).toEqual({ successful: 0, failed: 0, successfulWithBadStep: null, failedWithGoodStep: null });
    expect(() => stepOutcomeDisagreement(trajectories, { goodThreshold: Number.NaN })).toThrow(/goodThreshold must be a finite number, got NaN/);
  });
});
