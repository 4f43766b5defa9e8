import { describe, expect, it } from 'vitest';
import { runChecks } from './run-checks';

describe('the checks at the top of a run report', () => {
  it("says what the warm start's check measured", () => {
    const [check] = runChecks({ warmStart: { check: { epochs: 8, finalLoss: 0.0371, heldOutAccuracy: 0.55, ok: true } }, totalSteps: 30 });
    expect(check).toEqual({ name: 'warm-start', ok: true, message: 'The warm start passed its check (loss 0.037, 55.0% of the held-back training tasks).' });
  });

  it('passes a DAPO stage that stopped because the policy solved nearly every prompt, and fails one that found nothing to learn', () => {
    const solved = 'DAPO stopped after step 5: Dynamic sampling kept 6 of 8 groups ... Most dropped groups were all right';
    expect(runChecks({ train: { steps: 5, stoppedEarly: solved, saturated: true }, totalSteps: 30 })).toEqual([
      { name: 'train', ok: true, message: `${solved} (5 of 30 steps ran).` },
    ]);
    expect(runChecks({ train: { steps: 2, stoppedEarly: 'DAPO stopped after step 2: ...', saturated: false }, totalSteps: 30 })[0]?.ok).toBe(false);
    expect(runChecks({ train: { steps: 30 }, totalSteps: 30 })[0]).toEqual({ name: 'train', ok: true, message: 'DAPO ran all 30 of 30 steps.' });
  });
});
