import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignStepCredit, softMinWeighted, suffixSums } from './step-credit';
import { standardize } from './statistics';
import { expandStepAdvantages } from './token-advantages';

const exact = { stdEstimator: 'bessel', eps: 0 } as const;
const expectRows = (actual: Float64Array[], expected: number[][], digits = 7) => {
  expect(actual.map((row) => row.length)).toEqual(expected.map((row) => row.length));
  expected.forEach((row, i) => {
    row.forEach((value, j) => {
      expect(actual[i]?.[j]).toBeCloseTo(value, digits);
    });
  });
};

describe('process-sum credit (DeepSeekMath, spec worked example)', () => {
  const input = { outcomeRewards: [0, 1], stepScores: [[0.9, 0.2], [0.8, 0.7, 0.9]], stepCounts: [2, 3] };

  it('normalises all step scores of the group and sums from each step on', () => {
    expectRows(assignStepCredit(input, { kind: 'process-sum' }, exact), [
      [-1.02899151, -1.71498585],
      [1.02899151, 0.68599434, 0.68599434],
    ]);
  });

  it('with verl eps 1e-6 the numbers move by less than 1e-5', () => {
    const expected = [-1.02899151, -1.71498585, 1.02899151, 0.68599434, 0.68599434];
    const actual = assignStepCredit(input, { kind: 'process-sum' }, { stdEstimator: 'bessel', eps: 1e-6 }).flatMap((row) => Array.from(row));
    actual.forEach((value, index) => {
      const difference = Math.abs(value - (expected[index] as number));
      expect(difference).toBeGreaterThan(0);
      expect(difference).toBeLessThan(1e-5);
    });
  });

  it('mix adds lambda times the process advantage to the broadcast outcome advantage', () => {
    // Outcome [0, 1] -> Bessel advantages [-1/sqrt(2), 1/sqrt(2)].
    const a = Math.SQRT1_2;
    expectRows(assignStepCredit(input, { kind: 'mix', lambda: 0.5, process: { kind: 'process-sum' } }, exact), [
      [-a - 0.5 * 1.02899151, -a - 0.5 * 1.71498585],
      [a + 0.5 * 1.02899151, a + 0.5 * 0.68599434, a + 0.5 * 0.68599434],
    ]);
  });

  it('outcome credit broadcasts the group advantage to every step and ignores step scores', () => {
    const a = Math.SQRT1_2;
    expectRows(assignStepCredit(input, { kind: 'outcome' }, exact), [[-a, -a], [a, a, a]]);
  });

  it('fails clearly when process credit has no step scores', () => {
    expect(() => assignStepCredit({ outcomeRewards: [0, 1], stepCounts: [1, 1] }, { kind: 'process-sum' }, exact)).toThrow(
      /needs step scores/,
    );
    expect(() =>
      assignStepCredit({ outcomeRewards: [0, 1], stepScores: [[1], [1, 2]], stepCounts: [1, 1] }, { kind: 'process-sum' }, exact),
    ).toThrow(/Rollout 1 has 1 steps but 2 step scores/);
  });
});

describe('process-min credit (PURE)', () => {
  it('softmax(-r/T) weighting with T = 0.1 approaches the minimum', () => {
    const weighted = softMinWeighted([0.9, 0.2, 0.8], 0.1);
    const total = weighted.reduce((sum, value) => sum + value, 0);
    expect(total).toBeGreaterThan(0.2);
    expect(total).toBeLessThan(0.21);
    expect(softMinWeighted([0.9, 0.2, 0.8], 0.001).reduce((sum, value) => sum + value, 0)).toBeCloseTo(0.2, 10);
    // Hand-computed: weights exp(-(r - 0.2)/0.1) = [e^-7, 1, e^-6] / their sum.
    const z = Math.exp(-7) + 1 + Math.exp(-6);
    expect(weighted[0]).toBeCloseTo((Math.exp(-7) / z) * 0.9, 12);
    expect(weighted[1]).toBeCloseTo((1 / z) * 0.2, 12);
  });

  it('ranks a trajectory with one bad step below one whose steps are all fair', () => {
    // Same sum of scores (1.5); min-form should prefer the one without a bad step.
    const credit = assignStepCredit(
      { outcomeRewards: [1, 1], stepScores: [[1, 0.1, 0.4], [0.5, 0.5, 0.5]], stepCounts: [3, 3] },
      { kind: 'process-min', temperature: 0.1 },
      exact,
    );
    expect(credit[0]?.[0]).toBeLessThan(credit[1]?.[0] as number);
    const sumCredit = assignStepCredit(
      { outcomeRewards: [1, 1], stepScores: [[1, 0.1, 0.4], [0.5, 0.5, 0.5]], stepCounts: [3, 3] },
      { kind: 'process-sum' },
      exact,
    );
    expect(sumCredit[0]?.[0]).toBeCloseTo(sumCredit[1]?.[0] as number, 10);
  });

  it('normalised step returns sum to zero over the group', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 6 }),
        (scores) => {
          const credit = assignStepCredit(
            { outcomeRewards: scores.map(() => 0), stepScores: scores, stepCounts: scores.map((row) => row.length) },
            { kind: 'process-min', temperature: 0.1 },
            exact,
          );
          const total = credit.reduce((sum, row) => sum + row.reduce((inner, value) => inner + value, 0), 0);
          expect(Math.abs(total)).toBeLessThan(1e-8);
        },
      ),
    );
  });
});

describe('process-sum properties', () => {
  it('the normalised step scores sum to zero, and step advantages are their suffix sums', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 6 }),
        (scores) => {
          const normalised = standardize(scores.flat(), exact);
          expect(Math.abs(normalised.reduce((sum, value) => sum + value, 0))).toBeLessThan(1e-8);
          const credit = assignStepCredit(
            { outcomeRewards: scores.map(() => 0), stepScores: scores, stepCounts: scores.map((row) => row.length) },
            { kind: 'process-sum' },
            exact,
          );
          let offset = 0;
          scores.forEach((row, rollout) => {
            const expected = suffixSums(normalised.slice(offset, offset + row.length));
            expected.forEach((value, step) => {
              expect(credit[rollout]?.[step]).toBeCloseTo(value, 9);
            });
            offset += row.length;
          });
        },
      ),
    );
  });
});

describe('expandStepAdvantages', () => {
  it('gives every token of a step that step’s advantage', () => {
    const rows = expandStepAdvantages([0.5, -1.25, 2], [3, 0, 2]);
    expect(rows.map((row) => Array.from(row))).toEqual([[0.5, 0.5, 0.5], [], [2, 2]]);
    expect(() => expandStepAdvantages([1], [1, 2])).toThrow(/1 step advantages for 2 completions/);
    expect(() => expandStepAdvantages([1], [-1])).toThrow(/non-negative integer, got -1/);
  });
});
