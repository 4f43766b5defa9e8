import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
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
      for (let round = 0; round < policy.maxRounds; round++) {
        const count = policy.promptsPerRound ?? targetGroups - kept.length;
        const generated = await settings.generate(count, round);
        generatedGroups += generated.length;
        const filtered = split(generated, policy);
        kept.push(...filtered.kept);
        droppedGroups += filtered.dropped.length;
        droppedRollouts += countRollouts(filtered.dropped);
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
      throw new AgentFlowError({
        code: 'DYNAMIC_SAMPLING_EXHAUSTED',
        message:
          `Dynamic sampling kept ${kept.length} of ${targetGroups} groups after ${policy.maxRounds} generation rounds ` +
          `(${droppedGroups} of ${generatedGroups} groups dropped because ${NO_SIGNAL[policy.signal ?? 'outcome']}, ` +
          `${droppedRollouts} rollouts spent on them). Raise dynamicSampling.maxRounds or groupSize, ` +
          `use easier or harder prompts, or check that the reward function can tell rollouts apart.`,
        details: { kept: kept.length, targetGroups, rounds: policy.maxRounds, droppedGroups, droppedRollouts, generatedGroups, signal: policy.signal ?? 'outcome' },
      });
    }
    default:
      return assertNever(policy, 'dynamic sampling');
  }
}
