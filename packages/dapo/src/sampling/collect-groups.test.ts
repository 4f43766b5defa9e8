import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { collectGroups } from './collect-groups';
import { isInformativeGroup } from './group-filter';

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

  it('gives up after maxRounds with a clear error', async () => {
    const source = scripted([[1, 1], [1, 1], [1, 1], [0, 1]]);
    const attempt = collectGroups({ ...common, dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 2 }, targetGroups: 4, generate: source.generate });
    await expect(attempt).rejects.toThrow(
      /kept 1 of 4 groups after 2 generation rounds \(6 of 7 groups dropped because all their rewards were equal, 12 rollouts spent on them\)/,
    );
    await attempt.catch((error) => expect(AgentFlowError.hasCode(error, 'DYNAMIC_SAMPLING_EXHAUSTED')).toBe(true));
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
