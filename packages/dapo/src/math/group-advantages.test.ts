import { AgentFlowError } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchGroupAdvantages, groupAdvantages } from './group-advantages';
import { standardDeviation } from './statistics';

const expectClose = (actual: ArrayLike<number>, expected: number[], digits = 7) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((value, index) => {
    expect(actual[index]).toBeCloseTo(value, digits);
  });
};

describe('groupAdvantages (spec worked example R = [1, -1, -1, -1])', () => {
  const rewards = [1, -1, -1, -1];

  it('Bessel std without eps gives [1.5, -0.5, -0.5, -0.5]', () => {
    expectClose(groupAdvantages(rewards, { stdEstimator: 'bessel', eps: 0 }), [1.5, -0.5, -0.5, -0.5], 12);
  });

  it('Bessel std with eps 1e-4 (TRL) gives [1.49985001, -0.49995000 x3]', () => {
    expectClose(groupAdvantages(rewards, { stdEstimator: 'bessel', eps: 1e-4 }), [1.49985001, -0.49995, -0.49995, -0.49995], 8);
  });

  it('population std gives [1.7320508, -0.5773503 x3]', () => {
    expect(standardDeviation(rewards, 'population')).toBeCloseTo(0.8660254, 7);
    expectClose(groupAdvantages(rewards, { stdEstimator: 'population', eps: 0 }), [1.7320508, -0.5773503, -0.5773503, -0.5773503]);
  });

  it('without std scaling (Dr. GRPO) keeps only the mean baseline', () => {
    expectClose(groupAdvantages(rewards, { stdEstimator: 'bessel', eps: 1e-6, scaleByStd: false }), [1.5, -0.5, -0.5, -0.5], 12);
  });

  it('gives zeros for a group whose rewards are all equal, even with eps 0', () => {
    expectClose(groupAdvantages([1, 1, 1], { stdEstimator: 'bessel', eps: 0 }), [0, 0, 0]);
  });

  it('rejects a non-finite reward, naming it', () => {
    expect(() => groupAdvantages([1, Number.NaN], { stdEstimator: 'bessel', eps: 1e-6 })).toThrow(/rewards\[1\] must be a finite number, got null/);
    try {
      groupAdvantages([1, Number.POSITIVE_INFINITY], { stdEstimator: 'bessel', eps: 1e-6 });
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    }
  });

  it('batchGroupAdvantages normalises each group separately', () => {
    const result = batchGroupAdvantages([1, -1, -1, -1, 5, 7], [4, 2], { stdEstimator: 'bessel', eps: 0 });
    expectClose(result, [1.5, -0.5, -0.5, -0.5, -1 / Math.SQRT2, 1 / Math.SQRT2], 10);
    expect(() => batchGroupAdvantages([1, 2, 3], [2, 2], { stdEstimator: 'bessel', eps: 0 })).toThrow(/add up to 4 but 3 rewards/);
  });
});

describe('groupAdvantages properties', () => {
  // Rewards on a 1e-3 grid: realistic, and free of denormal spreads that no eps can tame.
  const rewardGroups = fc.array(fc.integer({ min: -10_000, max: 10_000 }).map((value) => value / 1000), { minLength: 1, maxLength: 16 });
  const estimators = fc.constantFrom<'bessel' | 'population'>('bessel', 'population');

  it('advantages sum to zero per group', () => {
    fc.assert(
      fc.property(fc.array(rewardGroups, { minLength: 1, maxLength: 5 }), estimators, fc.constantFrom(0, 1e-6, 1e-4), (groups, stdEstimator, eps) => {
        const advantages = batchGroupAdvantages(groups.flat(), groups.map((group) => group.length), { stdEstimator, eps });
        let offset = 0;
        for (const group of groups) {
          const sum = advantages.slice(offset, offset + group.length).reduce((total, value) => total + value, 0);
          expect(Math.abs(sum)).toBeLessThan(1e-9 * group.length);
          offset += group.length;
        }
      }),
    );
  });

  it('are unchanged by adding a constant to every reward and keep the order of rewards', () => {
    fc.assert(
      fc.property(rewardGroups, fc.double({ min: -5, max: 5, noNaN: true }), estimators, (rewards, shift, stdEstimator) => {
        const base = groupAdvantages(rewards, { stdEstimator, eps: 1e-6 });
        const shifted = groupAdvantages(rewards.map((reward) => reward + shift), { stdEstimator, eps: 1e-6 });
        base.forEach((value, index) => {
          expect(shifted[index]).toBeCloseTo(value, 5);
        });
        for (let i = 0; i < rewards.length; i++) {
          for (let j = 0; j < rewards.length; j++) {
            if ((rewards[i] as number) > (rewards[j] as number) + 1e-9) expect(base[i]).toBeGreaterThan(base[j] as number);
          }
        }
      }),
    );
  });
});
