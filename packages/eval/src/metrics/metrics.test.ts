import { createRandom, type Step, type Trajectory } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accuracy, wilsonInterval } from './accuracy';
import { comparePairedRuns, mcnemarExact, pairedBootstrap } from './paired-comparison';
import { avgAtK, meanPassAtK, passAtK } from './pass-at-k';
import { trajectoryStats } from './trajectory-stats';

describe('accuracy with a Wilson interval', () => {
  it('matches published values', () => {
    // 8 of 10: Wilson 95% interval 0.4902-0.9433 (Newcombe 1998, table I method 3 style).
    const estimate = wilsonInterval(8, 10);
    expect(estimate.estimate).toBe(0.8);
    expect(estimate.lower).toBeCloseTo(0.4902, 4);
    expect(estimate.upper).toBeCloseTo(0.9433, 4);
    // 0 of 30 (AIME-sized): the interval still has width.
    expect(wilsonInterval(0, 30).upper).toBeCloseTo(0.1135, 4);
    // The bounds at 0/n and n/n are exact, so the estimate always lies inside its interval.
    expect(wilsonInterval(0, 12).lower).toBe(0);
    expect(wilsonInterval(12, 12).upper).toBe(1);
    expect(accuracy([true, false, true, true])).toMatchObject({ successes: 3, total: 4, estimate: 0.75 });
  });

  it('always contains the estimate and stays in [0, 1]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 1, noNaN: true }), (total, share) => {
        const successes = Math.round(share * total);
        const { lower, upper, estimate } = wilsonInterval(successes, total);
        return lower >= 0 && upper <= 1 && lower <= estimate + 1e-12 && estimate <= upper + 1e-12;
      }),
    );
    expect(() => wilsonInterval(5, 3)).toThrow(/0 <= successes <= total, got 5 of 3/);
  });
});

describe('pass@k and avg@k', () => {
  it('matches the combinatorial definition', () => {
    // n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(passAtK(5, 4, 2)).toBe(1);
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    expect(() => passAtK(3, 1, 4)).toThrow(/1 <= k <= samples/);
  });

  it('is monotone in k and in the number correct', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.nat(), fc.nat(), (samples, c, k) => {
        const correct = c % (samples + 1);
        const kk = (k % (samples - 1)) + 1;
        return passAtK(samples, correct, kk) <= passAtK(samples, correct, kk + 1) + 1e-12 &&
          (correct === samples || passAtK(samples, correct, kk) <= passAtK(samples, correct + 1, kk) + 1e-12);
      }),
    );
  });

  it('averages over items', () => {
    const results = [
      [true, false, false, false],
      [true, true, true, true],
    ];
    expect(meanPassAtK(results, 1)).toBeCloseTo((0.25 + 1) / 2, 12);
    expect(avgAtK(results, 2)).toBeCloseTo((0.5 + 1) / 2, 12);
    expect(() => avgAtK([[true]], 2)).toThrow(/item 0 has 1 samples, fewer than k=2/);
  });
});

function step(action: Step['action'], toolError?: string): Step {
  return {
    index: 0,
    prompt: [],
    completion: '',
    truncated: false,
    action,
    ...(action ? { toolResult: { output: '', durationMs: 1, truncated: false, ...(toolError ? { error: toolError } : {}) } } : { parseError: 'bad json' }),
    timings: { plannerMs: 1, toolMs: 1, verifierMs: 0 },
  };
}

function trajectory(steps: Step[], termination: Trajectory['termination'] = 'finished'): Trajectory {
  return { id: 't', question: 'q', steps, answer: null, termination, startedAt: '2026-01-01T00:00:00Z', durationMs: 5 };
}

describe('trajectoryStats', () => {
  it('counts steps, tool calls, tool errors and format errors', () => {
    const search = { thought: '', action: 'corpus_search', action_input: { query: 'x' } };
    const finish = { thought: '', action: 'finish', action_input: '3' };
    const stats = trajectoryStats([
      trajectory([step(search), step(search, 'timeout'), step(finish)]),
      trajectory([step(null), step(null), step(search), step(null), step(null)], 'max_steps'),
    ]);
    expect(stats.meanSteps).toBe(4);
    expect(stats.meanToolCalls).toBe(1.5);
    expect(stats.formatErrorRate).toBe(0.5);
    expect(stats.tasksWithFormatError).toBe(0.5);
    expect(stats.toolErrorRate).toBeCloseTo(1 / 3, 12);
    expect(stats.terminations).toEqual({ finished: 0.5, max_steps: 0.5, timeout: 0, error: 0 });
    expect(trajectoryStats([]).meanSteps).toBe(0);
  });
});

describe('paired comparison', () => {
  it('computes the exact McNemar p-value', () => {
    // 10 discordant pairs, 9 favour B: p = 2 * (1 + 10) / 1024.
    const a = [...Array(9).fill(false), true, ...Array(20).fill(true)];
    const b = [...Array(9).fill(true), false, ...Array(20).fill(true)];
    const result = mcnemarExact(a, b);
    expect(result).toMatchObject({ onlyA: 1, onlyB: 9 });
    expect(result.pValue).toBeCloseTo(22 / 1024, 12);
    expect(mcnemarExact([true, false], [true, false]).pValue).toBe(1);
    expect(() => mcnemarExact([true], [true, false])).toThrow(/same items, got 1 and 2 results/);
  });

  it('bootstraps the difference reproducibly from a seed', () => {
    const random = createRandom(3);
    const a = Array.from({ length: 60 }, () => random.next() < 0.4);
    const b = a.map((value, index) => value || index % 3 === 0);
    const first = pairedBootstrap(a, b, { random: 11, resamples: 2000 });
    expect(pairedBootstrap(a, b, { random: 11, resamples: 2000 })).toEqual(first);
    expect(first.difference).toBeGreaterThan(0);
    expect(first.lower).toBeGreaterThan(0);
    expect(first.lower).toBeLessThanOrEqual(first.difference);
    expect(first.upper).toBeGreaterThanOrEqual(first.difference);
    expect(first.pValue).toBeLessThan(0.01);
    const same = comparePairedRuns(a, a, { resamples: 500 });
    expect(same.bootstrap).toMatchObject({ difference: 0, lower: 0, upper: 0, pValue: 1 });
    expect(same.mcnemar.pValue).toBe(1);
  });
});
