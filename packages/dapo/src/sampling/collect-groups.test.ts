import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { collectGroups } from './collect-groups';
import { isInformativeGroup } from './group-filter';
import { hasGroupSignal, resolveGroupSignal, stepScoresVary } from './group-signal';

interface FakeGroup {
  id: number;
  rewards: number[];
}

/** Generates groups from a fixed script of reward lists, recording each request. */
function scripted(script: number[][]) {
  const requests: Array<{ count: number; round: number }> = [];
  let next = 0;
  return {
    requests,
    generate: async (count: number, round: number): Promise<FakeGroup[]> => {
      requests.push({ count, round });
      return Array.from({ length: count }, () => {
        const id = next++;
        return { id, rewards: script[id % script.length] as number[] };
      });
    },
  };
}
const common = { rewardsOf: (group: FakeGroup) => group.rewards, rolloutCountOf: (group: FakeGroup) => group.rewards.length };

describe('dynamic sampling filter', () => {
  it('uses the population std with threshold 1e-3', () => {
    expect(isInformativeGroup([1, 1, 1, 1])).toBe(false);
    expect(isInformativeGroup([1, 1, 1, 1.0019])).toBe(false); // population std 8.2e-4
    expect(isInformativeGroup([1, 1, 1, 1.0025])).toBe(true); // population std 1.08e-3
  });
});

describe('collectGroups', () => {
  it('refill samples more prompts until the batch holds the target number of groups', async () => {
    const source = scripted([[1, 1, 1], [0, 1, 0], [0, 0, 0]]);
    const result = await collectGroups({ ...common, dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 5 }, targetGroups: 3, generate: source.generate });
    expect(result.groups.map((group) => group.id)).toEqual([1, 4, 7]);
    expect(source.requests).toEqual([
      { count: 3, round: 0 },
      { count: 2, round: 1 },
      { count: 1, round: 2 },
      { count: 1, round: 3 },
      { count: 1, round: 4 },
    ]);
    expect(result).toMatchObject({ rounds: 5, generatedGroups: 8, droppedGroups: 5, droppedRollouts: 15, surplusGroups: 0 });
  });

  it('refill with a fixed round size trims the surplus', async () => {
    const source = scripted([[0, 1], [0, 1], [1, 1]]);
    const result = await collectGroups({
      ...common,
      dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 5, promptsPerRound: 3 },
      targetGroups: 3,
      generate: source.generate,
    });
    expect(result.groups.map((group) => group.id)).toEqual([0, 1, 3]);
    expect(result).toMatchObject({ rounds: 2, generatedGroups: 6, droppedGroups: 2, droppedRollouts: 4, surplusGroups: 1 });
  });

  it('gives up after maxRounds with a clear error that says where the dropped groups stood', async () => {
    const source = scripted([[1, 1], [1, 1], [1, 1], [0, 1]]);
    const attempt = collectGroups({ ...common, dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 2 }, targetGroups: 4, generate: source.generate });
    // Every dropped group was all right: the policy has learned these prompts, and the message says so.
    await expect(attempt).rejects.toThrow(
      /kept 1 of 4 groups after 2 generation rounds \(6 of 7 groups dropped because all their rewards were equal: 6 at reward 1; 12 rollouts spent on them\)\. Most dropped groups were all right: the policy solves nearly every training prompt/,
    );
    await attempt.catch((error) => {
      expect(AgentFlowError.hasCode(error, 'DYNAMIC_SAMPLING_EXHAUSTED')).toBe(true);
      expect((error as AgentFlowError).details).toMatchObject({ droppedByReward: [{ reward: 1, groups: 6 }], saturated: true });
    });
    // Mostly wrong: the usual remedies.
    const failing = collectGroups({ ...common, dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 1 }, targetGroups: 3, generate: scripted([[0, 0], [0, 0], [1, 1]]).generate });
    await expect(failing).rejects.toThrow(/1 at reward 1, 2 at reward 0; 6 rollouts spent on them\)\. Raise dynamicSampling\.maxRounds/);
  });

  it("'drop' trains on what is left and 'off' keeps everything", async () => {
    const dropped = await collectGroups({ ...common, dynamicSampling: { kind: 'drop', stdThreshold: 1e-3 }, targetGroups: 3, generate: scripted([[1, 1], [0, 1]]).generate });
    expect(dropped.groups.map((group) => group.id)).toEqual([1]);
    expect(dropped).toMatchObject({ droppedGroups: 2, droppedRollouts: 4 });
    const kept = await collectGroups({ ...common, dynamicSampling: { kind: 'off' }, targetGroups: 3, generate: scripted([[1, 1], [0, 1]]).generate });
    expect(kept.groups).toHaveLength(3);
    expect(kept.droppedGroups).toBe(0);
  });
});

describe('dynamic sampling on the PRM signal', () => {
  interface ScoredFake {
    id: number;
    rewards: number[];
    stepScores: number[][];
  }
  // Group 0: all right, but the PRM tells a wasted second step from a good one.
  // Group 1: all right, every step scored alike. Group 2: outcomes differ, step scores alike.
  const groups: ScoredFake[] = [
    { id: 0, rewards: [1, 1, 1], stepScores: [[0.9, 0.2], [0.9], [0.9, 0.9]] },
    { id: 1, rewards: [1, 1, 1], stepScores: [[0.5], [0.5], [0.5]] },
    { id: 2, rewards: [0, 1, 1], stepScores: [[0.5], [0.5], [0.5]] },
  ];
  const collect = (signal: 'outcome' | 'prm' | 'either' | undefined) =>
    collectGroups<ScoredFake>({
      dynamicSampling: { kind: 'drop', stdThreshold: 1e-3, ...(signal ? { signal } : {}) },
      targetGroups: 3,
      generate: async () => groups,
      rewardsOf: (group) => group.rewards,
      stepScoresOf: (group) => group.stepScores,
      rolloutCountOf: (group) => group.rewards.length,
    });

  it("keeps an all-right group whose step scores vary with 'either' and 'prm', drops it with 'outcome', and counts it", async () => {
    const either = await collect('either');
    expect(either.groups.map((group) => group.id)).toEqual([0, 2]);
    expect(either).toMatchObject({ droppedGroups: 1, droppedRollouts: 3, equalOutcomeGroups: 1 });
    const prm = await collect('prm');
    expect(prm.groups.map((group) => group.id)).toEqual([0]);
    expect(prm.equalOutcomeGroups).toBe(1);
    for (const outcome of [await collect('outcome'), await collect(undefined)]) {
      expect(outcome.groups.map((group) => group.id)).toEqual([2]);
      expect(outcome.equalOutcomeGroups).toBe(0);
    }
  });

  it('measures the spread over all steps of all rollouts with the population std and prmStdThreshold', () => {
    expect(stepScoresVary([[0.5, 0.5], [0.5]])).toBe(false);
    // Scores [0.5, 0.5, 0.5, 0.5025]: population std 1.0825e-3 passes 1e-3; [.., 0.502]: 8.66e-4 does not.
    expect(stepScoresVary([[0.5, 0.5], [0.5, 0.5025]])).toBe(true);
    expect(stepScoresVary([[0.5, 0.5], [0.5, 0.502]])).toBe(false);
    expect(stepScoresVary([[0.5, 0.5], [0.5, 0.5025]], 0.01)).toBe(false);
    expect(hasGroupSignal([1, 1], [[0.1], [0.9]], { signal: 'either', stdThreshold: 1e-3, prmStdThreshold: 1e-3 })).toBe(true);
    expect(() => hasGroupSignal([1, 1], undefined, { signal: 'prm', stdThreshold: 1e-3, prmStdThreshold: 1e-3 })).toThrow(/needs the group's step scores/);
  });

  it("defaults to 'either' with a credit that uses step scores and to 'outcome' otherwise", () => {
    expect(resolveGroupSignal({ kind: 'process-sum' }, { stdThreshold: 1e-3 }).signal).toBe('either');
    expect(resolveGroupSignal({ kind: 'mix', lambda: 1, process: { kind: 'process-sum' } }, {}).signal).toBe('either');
    expect(resolveGroupSignal({ kind: 'outcome' }, {}).signal).toBe('outcome');
    expect(resolveGroupSignal({ kind: 'gigpo', gamma: 0.95, omega: 1 }, {}).signal).toBe('outcome');
    expect(resolveGroupSignal({ kind: 'process-min', temperature: 0.1 }, { signal: 'prm', prmStdThreshold: 0.05 })).toEqual({
      signal: 'prm',
      stdThreshold: 1e-3,
      prmStdThreshold: 0.05,
    });
  });

  it('names the signal when refill gives up', async () => {
    const attempt = collectGroups<ScoredFake>({
      dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 1, signal: 'either' },
      targetGroups: 2,
      generate: async () => [groups[1] as ScoredFake],
      rewardsOf: (group) => group.rewards,
      stepScoresOf: (group) => group.stepScores,
      rolloutCountOf: (group) => group.rewards.length,
    });
    await expect(attempt).rejects.toThrow(/1 of 1 groups dropped because all their rewards were equal and their step scores did not vary/);
  });
});
