import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import { filterGroups } from './group-filter';

/**
 * What happens to groups whose rewards are all equal (they have zero advantage).
 * - 'off': keep every group (GRPO).
 * - 'drop': drop them and train on a smaller batch.
 * - 'refill' (DAPO, section 3.2): drop them and sample more prompts until the batch holds
 *   the target number of groups, failing after `maxRounds` generation rounds.
 */
export type DynamicSampling =
  | { kind: 'off' }
  | { kind: 'drop'; stdThreshold: number }
  | { kind: 'refill'; stdThreshold: number; maxRounds: number; promptsPerRound?: number };

export interface CollectGroupsSettings<Group> {
  dynamicSampling: DynamicSampling;
  /** Groups (prompts) wanted in the batch. */
  targetGroups: number;
  /** Samples `count` new prompts and returns one group of rollouts for each. */
  generate(count: number, round: number): Promise<Group[]>;
  rewardsOf(group: Group): ArrayLike<number>;
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
}

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
  switch (policy.kind) {
    case 'off': {
      const groups = await settings.generate(targetGroups, 0);
      return { groups, rounds: 1, generatedGroups: groups.length, droppedGroups: 0, droppedRollouts: 0, surplusGroups: 0 };
    }
    case 'drop': {
      const generated = await settings.generate(targetGroups, 0);
      const { kept, dropped } = filterGroups(generated, settings.rewardsOf, policy.stdThreshold);
      return {
        groups: kept,
        rounds: 1,
        generatedGroups: generated.length,
        droppedGroups: dropped.length,
        droppedRollouts: countRollouts(dropped),
        surplusGroups: 0,
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
        const filtered = filterGroups(generated, settings.rewardsOf, policy.stdThreshold);
        kept.push(...filtered.kept);
        droppedGroups += filtered.dropped.length;
        droppedRollouts += countRollouts(filtered.dropped);
        if (kept.length >= targetGroups) {
          return {
            groups: kept.slice(0, targetGroups),
            rounds: round + 1,
            generatedGroups,
            droppedGroups,
            droppedRollouts,
            surplusGroups: kept.length - targetGroups,
          };
        }
      }
      throw new AgentFlowError({
        code: 'DYNAMIC_SAMPLING_EXHAUSTED',
        message:
          `Dynamic sampling kept ${kept.length} of ${targetGroups} groups after ${policy.maxRounds} generation rounds ` +
          `(${droppedGroups} of ${generatedGroups} groups dropped because all their rewards were equal, ` +
          `${droppedRollouts} rollouts spent on them). Raise dynamicSampling.maxRounds or groupSize, ` +
          `use easier or harder prompts, or check that the reward function can tell rollouts apart.`,
        details: { kept: kept.length, targetGroups, rounds: policy.maxRounds, droppedGroups, droppedRollouts, generatedGroups },
      });
    }
    default:
      return assertNever(policy, 'dynamic sampling');
  }
}
