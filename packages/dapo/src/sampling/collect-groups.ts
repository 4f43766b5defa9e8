import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import { mean } from '../math/statistics';
import { DEFAULT_STD_THRESHOLD, isInformativeGroup } from './group-filter';
import { DEFAULT_PRM_STD_THRESHOLD, type GroupSignal, hasGroupSignal } from './group-signal';

/**
 * What happens to groups without a learning signal (by default: whose rewards are all equal,
 * so their outcome advantages are all 0).
 * - 'off': keep every group (GRPO).
 * - 'drop': drop them and train on a smaller batch.
 * - 'refill' (DAPO, section 3.2): drop them and sample more prompts until the batch holds
 *   the target number of groups, failing after `maxRounds` generation rounds.
 * `signal` says what counts as a signal (absent: 'outcome'); `prmStdThreshold` (default 1e-3)
 * is the population std at which step scores vary.
 */
export type DynamicSampling =
  | { kind: 'off' }
  | { kind: 'drop'; stdThreshold: number; signal?: GroupSignal; prmStdThreshold?: number }
  | { kind: 'refill'; stdThreshold: number; maxRounds: number; promptsPerRound?: number; signal?: GroupSignal; prmStdThreshold?: number };

export interface CollectGroupsSettings<Group> {
  dynamicSampling: DynamicSampling;
  /** Groups (prompts) wanted in the batch. */
  targetGroups: number;
  /** Samples `count` new prompts and returns one group of rollouts for each. */
  generate(count: number, round: number): Promise<Group[]>;
  rewardsOf(group: Group): ArrayLike<number>;
  /** [G][steps_i] the PRM's step scores; needed when `signal` is 'prm' or 'either'. */
  stepScoresOf?(group: Group): ReadonlyArray<ArrayLike<number>> | undefined;
  rolloutCountOf(group: Group): number;
}

export interface CollectedGroups<Group> {
  /** At most targetGroups groups, in generation order. */
  groups: Group[];
  rounds: number;
  generatedGroups: number;
  droppedGroups: number;
  /** Rollouts spent on dropped groups. */
  droppedRollouts: number;
  /** Informative groups generated beyond the target and discarded. */
  surplusGroups: number;
  /**
   * Of the groups returned, those whose outcome rewards are all equal (population std below
   * stdThreshold, 1e-3 with 'off'): kept for their step scores, or by 'off'.
   */
  equalOutcomeGroups: number;
}

/** Why a dropped group had no signal, for the DYNAMIC_SAMPLING_EXHAUSTED message. */
const NO_SIGNAL: Record<GroupSignal, string> = {
  outcome: 'all their rewards were equal',
  prm: 'their step scores did not vary',
  either: 'all their rewards were equal and their step scores did not vary',
};

const formatReward = (reward: number): string => (Number.isInteger(reward) ? String(reward) : reward.toFixed(3));

/**
 * Whether most dropped groups sat at reward 1 or more (right, in the 0/1 and -1/+1
 * conventions): the policy answers the training prompts right every time, and outcome rewards
 * have nothing left to tell apart. The error's `details.saturated` says so for a caller.
 */
function solvedNearlyAll(byReward: ReadonlyArray<readonly [number, number]>): boolean {
  const total = byReward.reduce((sum, [, count]) => sum + count, 0);
  const [best, atBest] = byReward[0] ?? [0, 0];
  return best >= 1 && atBest >= 0.8 * total;
}

const SATURATED_REMEDY =
  'Most dropped groups were all right: the policy solves nearly every training prompt every time. ' +
  "Harder or more prompts, or a signal that still varies (signal 'either' with a PRM), would give DAPO more to learn.";
const EXHAUSTED_REMEDY = 'Raise dynamicSampling.maxRounds or groupSize, use easier or harder prompts, or check that the reward function can tell rollouts apart.';

/** Generates, filters and refills groups according to the dynamic-sampling policy. */
export async function collectGroups<Group>(settings: CollectGroupsSettings<Group>): Promise<CollectedGroups<Group>> {
  const { dynamicSampling: policy, targetGroups } = settings;
  if (!Number.isInteger(targetGroups) || targetGroups < 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `targetGroups must be a positive integer, got ${describeValue(targetGroups)}.`,
    });
  }
  const countRollouts = (groups: Group[]) => groups.reduce((sum, group) => sum + settings.rolloutCountOf(group), 0);
  const outcomeThreshold = policy.kind === 'off' ? DEFAULT_STD_THRESHOLD : policy.stdThreshold;
  const countEqualOutcomes = (groups: Group[]) => groups.filter((group) => !isInformativeGroup(settings.rewardsOf(group), outcomeThreshold)).length;
  const split = (groups: Group[], filter: Exclude<DynamicSampling, { kind: 'off' }>) => {
    const kept: Group[] = [];
    const dropped: Group[] = [];
    for (const group of groups) {
      const signal = hasGroupSignal(settings.rewardsOf(group), settings.stepScoresOf?.(group), {
        signal: filter.signal ?? 'outcome',
        stdThreshold: filter.stdThreshold,
        prmStdThreshold: filter.prmStdThreshold ?? DEFAULT_PRM_STD_THRESHOLD,
      });
      (signal ? kept : dropped).push(group);
    }
    return { kept, dropped };
  };
  switch (policy.kind) {
    case 'off': {
      const groups = await settings.generate(targetGroups, 0);
      return {
        groups,
        rounds: 1,
        generatedGroups: groups.length,
        droppedGroups: 0,
        droppedRollouts: 0,
        surplusGroups: 0,
        equalOutcomeGroups: countEqualOutcomes(groups),
      };
    }
    case 'drop': {
      const generated = await settings.generate(targetGroups, 0);
      const { kept, dropped } = split(generated, policy);
      return {
        groups: kept,
        rounds: 1,
        generatedGroups: generated.length,
        droppedGroups: dropped.length,
        droppedRollouts: countRollouts(dropped),
        surplusGroups: 0,
        equalOutcomeGroups: countEqualOutcomes(kept),
      };
    }
    case 'refill': {
      if (!Number.isInteger(policy.maxRounds) || policy.maxRounds < 1) {
        throw new AgentFlowError({
          code: 'INVALID_CONFIG',
          message: `dynamicSampling.maxRounds must be a positive integer, got ${describeValue(policy.maxRounds)}.`,
        });
      }
      const kept: Group[] = [];
      let generatedGroups = 0;
      let droppedGroups = 0;
      let droppedRollouts = 0;
      /** Dropped groups by the mean of their outcome rewards: all right, all wrong, or between. */
      const droppedByReward = new Map<number, number>();
      for (let round = 0; round < policy.maxRounds; round++) {
        const count = policy.promptsPerRound ?? targetGroups - kept.length;
        const generated = await settings.generate(count, round);
        generatedGroups += generated.length;
        const filtered = split(generated, policy);
        kept.push(...filtered.kept);
        droppedGroups += filtered.dropped.length;
        droppedRollouts += countRollouts(filtered.dropped);
        for (const group of filtered.dropped) {
          const reward = mean(settings.rewardsOf(group));
          droppedByReward.set(reward, (droppedByReward.get(reward) ?? 0) + 1);
        }
        if (kept.length >= targetGroups) {
          const groups = kept.slice(0, targetGroups);
          return {
            groups,
            rounds: round + 1,
            generatedGroups,
            droppedGroups,
            droppedRollouts,
            surplusGroups: kept.length - targetGroups,
            equalOutcomeGroups: countEqualOutcomes(groups),
          };
        }
      }
      const byReward = [...droppedByReward].sort(([a], [b]) => b - a);
      const saturated = solvedNearlyAll(byReward);
      throw new AgentFlowError({
        code: 'DYNAMIC_SAMPLING_EXHAUSTED',
        message:
          `Dynamic sampling kept ${kept.length} of ${targetGroups} groups after ${policy.maxRounds} generation rounds ` +
          `(${droppedGroups} of ${generatedGroups} groups dropped because ${NO_SIGNAL[policy.signal ?? 'outcome']}: ` +
          `${byReward.map(([reward, count]) => `${count} at reward ${formatReward(reward)}`).join(', ')}; ` +
          `${droppedRollouts} rollouts spent on them). ${saturated ? SATURATED_REMEDY : EXHAUSTED_REMEDY}`,
        details: {
          kept: kept.length,
          targetGroups,
          rounds: policy.maxRounds,
          droppedGroups,
          droppedRollouts,
          generatedGroups,
          signal: policy.signal ?? 'outcome',
          droppedByReward: byReward.map(([reward, groups]) => ({ reward, groups })),
          saturated,
        },
      });
    }
    default:
      return assertNever(policy, 'dynamic sampling');
  }
}
