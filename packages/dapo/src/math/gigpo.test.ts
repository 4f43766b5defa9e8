import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { discountedStepReturns, stepGroupAdvantages } from './gigpo';
import { assignStepCredit, needsStepScores } from './step-credit';

const exact = { stdEstimator: 'bessel', eps: 0 } as const;
const expectRows = (actual: Float64Array[], expected: number[][], digits = 7) => {
  expect(actual.map((row) => row.length)).toEqual(expected.map((row) => row.length));
  expected.forEach((row, i) => {
    row.forEach((value, j) => {
      expect(actual[i]?.[j]).toBeCloseTo(value, digits);
    });
  });
};

/*
 * One prompt, four rollouts (gamma 0.5, omega 1, Bessel std, eps 0). The state of a step is
 * the history of calls and results before it; every first step acts from the empty history.
 *   o1: lookup -> decoy, lookup again -> right, finish      R = 1   (3 steps)
 *   o2: lookup -> decoy, finish                             R = 0   (2 steps)
 *   o3: other lookup -> right, finish                       R = 1   (2 steps)
 *   o4: python -> error, finish                             R = 0   (2 steps)
 * o1 and o2 share their first step, so their second steps act from the same state (D).
 *
 * Episode level: R = [1, 0, 1, 0], mean 0.5, Bessel std sqrt(1/3) = 0.57735027,
 *   A_E = +-0.5 / 0.57735027 = +-0.8660254.
 * Returns gamma^(steps to the end) x R: o1 [0.25, 0.5, 1], o2 [0, 0], o3 [0.5, 1], o4 [0, 0].
 * Step group "start" (the four first steps): [0.25, 0, 0.5, 0], mean 0.1875,
 *   deviations [0.0625, -0.1875, 0.3125, -0.1875], squares sum 0.171875, Bessel std
 *   sqrt(0.171875 / 3) = 0.23935678, A_S = [0.26111648, -0.78334945, 1.30558242, -0.78334945].
 * Step group D (o1 and o2 second steps): [0.5, 0], mean 0.25, Bessel std 0.35355339,
 *   A_S = [+0.70710678, -0.70710678] = +-1/sqrt(2): going back to check the decoy beats answering on it.
 * Singletons (o1 finish, o3 finish, o4 finish): A_S = 0, only the episode advantage.
 */
const example = {
  outcomeRewards: [1, 0, 1, 0],
  stepCounts: [3, 2, 2, 2],
  stepStates: [
    ['start', 'D', 'D+recheck'],
    ['start', 'D'],
    ['start', 'right'],
    ['start', 'python-error'],
  ],
};
const e = 0.8660254;

describe('GiGPO step-group credit (Feng et al., 2025)', () => {
  it('adds the step-group advantage of the shared states to the episode advantage (hand-computed)', () => {
    expectRows(assignStepCredit(example, { kind: 'gigpo', gamma: 0.5, omega: 1 }, exact), [
      [e + 0.26111648, e + Math.SQRT1_2, e],
      [-e - 0.78334945, -e - Math.SQRT1_2],
      [e + 1.30558242, e],
      [-e - 0.78334945, -e],
    ]);
  });

  it("with Dr. GRPO's scaleByStd false (verl-agent mean_norm) both levels keep only the mean baseline", () => {
    // Episode: R - 0.5; step groups: return - group mean (0.1875 and 0.25).
    expectRows(assignStepCredit(example, { kind: 'gigpo', gamma: 0.5, omega: 1 }, { ...exact, scaleByStd: false }), [
      [0.5 + 0.0625, 0.5 + 0.25, 0.5],
      [-0.5 - 0.1875, -0.5 - 0.25],
      [0.5 + 0.3125, 0.5],
      [-0.5 - 0.1875, -0.5],
    ]);
  });

  it('omega weights the step level; omega 0 is the outcome broadcast', () => {
    const outcome = assignStepCredit(example, { kind: 'outcome' }, exact);
    expectRows(assignStepCredit(example, { kind: 'gigpo', gamma: 0.5, omega: 0 }, exact), outcome.map((row) => Array.from(row)));
    const doubled = assignStepCredit(example, { kind: 'gigpo', gamma: 0.5, omega: 2 }, exact);
    expectRows([doubled[1] as Float64Array], [[-e - 2 * 0.78334945, -e - 2 * Math.SQRT1_2]]);
  });

  it('a step whose state no other step shares gets 0 step advantage, whatever its return', () => {
    const returns = [Float64Array.of(5, 7), Float64Array.of(1)];
    const advantages = stepGroupAdvantages(returns, [['a', 'b'], ['c']], exact);
    expectRows(advantages, [[0, 0], [0]]);
  });

  it('discounts the outcome reward by the steps left to the end', () => {
    expectRows(discountedStepReturns([1, -2], [3, 1], 0.95), [[0.9025, 0.95, 1], [-2]], 12);
    expect(() => discountedStepReturns([1], [1], 1.5)).toThrow(/gamma must be in \[0, 1\], got 1.5/);
  });

  it('needs no PRM, but the states of the steps', () => {
    expect(needsStepScores({ kind: 'gigpo', gamma: 0.95, omega: 1 })).toBe(false);
    expect(() => assignStepCredit({ outcomeRewards: [0, 1], stepCounts: [1, 1] }, { kind: 'gigpo', gamma: 0.95, omega: 1 }, exact)).toThrow(
      /'gigpo' needs the state of every step/,
    );
  });

  it('step advantages sum to zero within every step group', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.double({ min: -1, max: 1, noNaN: true }), fc.constantFrom('s', 't', 'u')), { minLength: 1, maxLength: 4 }), {
          minLength: 2,
          maxLength: 5,
        }),
        (rollouts) => {
          const returns = rollouts.map((steps) => Float64Array.from(steps.map(([value]) => value)));
          const keys = rollouts.map((steps) => steps.map(([, key]) => key));
          const advantages = stepGroupAdvantages(returns, keys, { stdEstimator: 'population', eps: 1e-6 });
          const sums = new Map<string, number>();
          keys.forEach((row, rollout) => {
            row.forEach((key, step) => {
              sums.set(key, (sums.get(key) ?? 0) + (advantages[rollout]?.[step] as number));
            });
          });
          for (const sum of sums.values()) expect(Math.abs(sum)).toBeLessThan(1e-6);
        },
      ),
    );
  });
});
