import { AgentFlowError, describeValue } from '@agentflow/core';
import type { GroupAdvantageSettings } from './group-advantages';
import { assertFinite, standardize } from './statistics';

/**
 * [G][steps_i] discounted return of every step of one group (GiGPO Eq. 5). The trajectory's
 * reward R_i arrives after its last step and no step earns a reward of its own, so the step
 * t of a T-step trajectory returns gamma^(T-1-t) * R_i.
 */
export function discountedStepReturns(rewards: ArrayLike<number>, stepCounts: ArrayLike<number>, gamma: number): Float64Array[] {
  assertFinite(rewards, 'rewards');
  if (!(gamma >= 0 && gamma <= 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `GiGPO gamma must be in [0, 1], got ${describeValue(gamma)}.` });
  }
  if (rewards.length !== stepCounts.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Got ${rewards.length} rewards but ${stepCounts.length} step counts.`,
    });
  }
  return Array.from({ length: rewards.length }, (_value, rollout) => {
    const count = stepCounts[rollout] as number;
    const returns = new Float64Array(count); // [steps_i]
    let running = rewards[rollout] as number;
    for (let step = count - 1; step >= 0; step--) {
      returns[step] = running;
      running *= gamma;
    }
    return returns;
  });
}

/**
 * [G][steps_i] GiGPO's step-level relative advantage (Eq. 7): the steps of one group that act
 * from the same state (equal `stateKeys`) form a step group, and each step's return is
 * normalised within it, (Q - mean) / (std + eps), or Q - mean without `scaleByStd`. A step
 * whose state no other step of the group shares has nothing to compare with: 0.
 */
export function stepGroupAdvantages(
  returns: ReadonlyArray<ArrayLike<number>>,
  stateKeys: ReadonlyArray<ReadonlyArray<string>>,
  settings: GroupAdvantageSettings,
): Float64Array[] {
  if (returns.length !== stateKeys.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Got returns for ${returns.length} rollouts but state keys for ${stateKeys.length}.`,
    });
  }
  const members = new Map<string, Array<[rollout: number, step: number]>>();
  returns.forEach((row, rollout) => {
    const keys = stateKeys[rollout] as ReadonlyArray<string>;
    if (keys.length !== row.length) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Rollout ${rollout} has ${row.length} step returns but ${keys.length} state keys.`,
      });
    }
    keys.forEach((key, step) => {
      const group = members.get(key);
      if (group === undefined) members.set(key, [[rollout, step]]);
      else group.push([rollout, step]);
    });
  });
  const advantages = returns.map((row) => new Float64Array(row.length)); // [G][steps_i], singletons stay 0
  for (const group of members.values()) {
    if (group.length < 2) continue;
    const values = group.map(([rollout, step]) => (returns[rollout] as ArrayLike<number>)[step] as number); // [group size]
    const normalised = standardize(values, settings);
    group.forEach(([rollout, step], index) => {
      (advantages[rollout] as Float64Array)[step] = normalised[index] as number;
    });
  }
  return advantages;
}
