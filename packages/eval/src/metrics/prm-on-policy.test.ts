import { describe, expect, it } from 'vitest';
import { prmOnPolicy } from './prm-on-policy';

describe('prmOnPolicy (summary.json: the PRM on DAPO\'s own rollouts)', () => {
  it('averages the first and the last five DAPO steps, and is absent without step scores', () => {
    const rows = Array.from({ length: 12 }, (_, index) => ({ stage: 'train', step: index + 1, prmOutcomeMse: index / 100, prmOutcomeMseConstant: 0.2 }));
    const fit = prmOnPolicy([{ stage: 'warm-start', step: 1, loss: 0.5 }, ...rows, { stage: 'eval', step: 5, accuracy: 0.5 }]);
    // Steps 1-5 carry 0.00-0.04 (mean 0.02); steps 8-12 carry 0.07-0.11 (mean 0.09).
    expect(fit?.steps).toBe(12);
    expect(fit?.first.mse).toBeCloseTo(0.02, 12);
    expect(fit?.last.mse).toBeCloseTo(0.09, 12);
    expect(fit?.last.constant).toBeCloseTo(0.2, 12);
    expect(prmOnPolicy([{ stage: 'train', step: 1, reward: 1 }])).toBeUndefined();
  });
});
