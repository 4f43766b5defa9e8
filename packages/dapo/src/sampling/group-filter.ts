import { assertFinite, standardDeviation } from '../math/statistics';

/** DAPO's dynamic-sampling threshold: groups whose rewards have population std below it carry no signal. */
export const DEFAULT_STD_THRESHOLD = 1e-3;

/** True when a group's rewards differ (population std >= threshold), so its advantages are not all 0. */
export function isInformativeGroup(rewards: ArrayLike<number>, threshold = DEFAULT_STD_THRESHOLD): boolean {
  assertFinite(rewards, 'rewards');
  return standardDeviation(rewards, 'population') >= threshold;
}

export interface GroupFilterResult<Group> {
  kept: Group[];
  dropped: Group[];
}

/** Splits groups into those with signal and those whose rewards are all (nearly) equal. */
export function filterGroups<Group>(
  groups: readonly Group[],
  rewardsOf: (group: Group) => ArrayLike<number>,
  threshold = DEFAULT_STD_THRESHOLD,
): GroupFilterResult<Group> {
  const kept: Group[] = [];
  const dropped: Group[] = [];
  for (const group of groups) (isInformativeGroup(rewardsOf(group), threshold) ? kept : dropped).push(group);
  return { kept, dropped };
}
