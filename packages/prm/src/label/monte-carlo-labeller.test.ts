import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../__fixtures__/trajectories';
import type { PrmExample } from '../example/prm-example';
import { consensusFilter } from './consensus';
import { type CompleteFromPrefix, createMonteCarloLabeller } from './monte-carlo-labeller';

/**
 * A stand-in policy world: after a python step, completions succeed with probability 0.9;
 * after anything else, 0.25. Sampled with the random source it is given.
 */
const complete: CompleteFromPrefix = async (prefix, n, random) => {
  const p = prefix.step.action?.action === 'python' ? 0.9 : 0.25;
  return Array.from({ length: n }, () => random.next() < p);
};

describe('createMonteCarloLabeller', () => {
  it('soft label = fraction of successes; hard label = any; completions start right after the step', async () => {
    const seen: number[] = [];
    const labeller = createMonteCarloLabeller({
      complete: async (prefix, n, random) => {
        seen.push(prefix.trajectory.steps.length);
        expect(prefix.trajectory.steps.at(-1)?.index).toBe(prefix.step.stepIndex);
        return complete(prefix, n, random);
      },
      samples: 64,
      random: createRandom(1),
    });
    const { examples, failures } = await labeller.label([makeTrajectory()]);
    expect(failures).toEqual([]);
    expect(examples.map((example) => example.stepIndex)).toEqual([0, 1, 2, 3]);
    // The format error is 0 and started no completions.
    expect(examples[1]).toMatchObject({ label: 0, provenance: { labeller: 'monte-carlo', samples: 0 } });
    expect(seen.sort()).toEqual([1, 3, 4]);
    const python = examples[2]!;
    expect(python.label).toBe(python.provenance.successes! / 64);
    expect(python.label).toBeGreaterThan(0.75);
    expect(examples[0]!.label).toBeLessThan(0.45);

    const hard = await createMonteCarloLabeller({ complete, samples: 64, kind: 'hard', random: createRandom(1) }).label([
      makeTrajectory(),
    ]);
    expect(hard.examples.map((example) => example.label)).toEqual([1, 0, 1, 1]);
  });

  it('repeats exactly with the same seed, whatever the concurrency', async () => {
    const run = (concurrency: number) =>
      createMonteCarloLabeller({ complete, samples: 16, random: createRandom(7), concurrency }).label([
        makeTrajectory('a'),
        makeTrajectory('b'),
      ]);
    const [one, four] = await Promise.all([run(1), run(4)]);
    expect(four.examples).toEqual(one.examples);
  });

  it('records a step whose completions fail or return the wrong count, and keeps going', async () => {
    const labeller = createMonteCarloLabeller({
      complete: async (prefix, n, random) => {
        if (prefix.step.stepIndex === 0) throw new Error('policy crashed');
        if (prefix.step.stepIndex === 2) return [true];
        return complete(prefix, n, random);
      },
      samples: 4,
      random: createRandom(3),
    });
    const { examples, failures } = await labeller.label([makeTrajectory()]);
    expect(examples.map((example) => example.stepIndex)).toEqual([1, 3]);
    expect(failures.map((failure) => failure.stepId)).toEqual(['traj-1:0', 'traj-1:2']);
    expect(failures[1]?.error).toMatch(/must return 4 booleans for step traj-1:2, got \[true\]/);
  });
});

function example(id: string, label: number, provenance: PrmExample['provenance']): PrmExample {
  return { id, trajectoryId: 't', stepIndex: Number(id), question: 'q', history: [], action: null, label, provenance };
}

describe('consensusFilter', () => {
  const judged = [
    example('0', 0.9, { labeller: 'judge', judgeModel: 'deepseek-chat', costUsd: 0.001 }),
    example('1', 0.1, { labeller: 'judge' }),
    example('2', 0.8, { labeller: 'judge' }),
    example('3', 0.3, { labeller: 'judge' }),
    example('9', 0.3, { labeller: 'judge' }),
  ];
  const monteCarlo = [
    example('0', 0.75, { labeller: 'monte-carlo', samples: 8, successes: 6 }), // both right: keep
    example('1', 0, { labeller: 'monte-carlo', samples: 8, successes: 0 }), // both wrong: keep
    example('2', 0, { labeller: 'monte-carlo', samples: 8, successes: 0 }), // judge right, MC wrong: drop
    example('3', 0.125, { labeller: 'monte-carlo', samples: 8, successes: 1 }), // judge wrong, MC any: drop
  ];

  it("keeps steps where both agree, with MC's 'any success' rule by default", () => {
    const result = consensusFilter(judged, monteCarlo);
    expect(result.kept.map((kept) => kept.id)).toEqual(['0', '1']);
    expect(result.disagreed).toBe(2);
    expect(result.unmatched).toBe(1);
    expect(result.kept[0]).toMatchObject({
      label: 0.9,
      provenance: { labeller: 'consensus', judgeModel: 'deepseek-chat', costUsd: 0.001, samples: 8, successes: 6 },
    });
  });

  it('with a fraction threshold, a lone success no longer makes a step right', () => {
    const result = consensusFilter(judged, monteCarlo, { monteCarloThreshold: 0.5, label: 'mean' });
    expect(result.kept.map((kept) => [kept.id, kept.label])).toEqual([
      ['0', (0.9 + 0.75) / 2],
      ['1', 0.05],
      ['3', (0.3 + 0.125) / 2],
    ]);
  });

  it('rejects a Monte-Carlo set that a judge labelled', () => {
    expect(() => consensusFilter(judged, judged)).toThrow(/step 0 in the Monte-Carlo set was labelled by judge/);
  });
});
