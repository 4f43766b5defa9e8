import { AgentFlowError, describeValue } from '@agentflow/core';
import { assertFinite, type StdEstimator, standardize } from './statistics';

/** How rewards of a group become advantages. */
export interface GroupAdvantageSettings {
  /** 'bessel' (n - 1, TRL and verl) or 'population' (n). */
  stdEstimator: StdEstimator;
  /** Added to the std before dividing (TRL 1e-4, verl 1e-6). */
  eps: number;
  /** Divide by std + eps (GRPO, DAPO); false keeps only the mean baseline (Dr. GRPO). */
  scaleByStd?: boolean;
}

export function assertAdvantageSettings(settings: GroupAdvantageSettings): void {
  if (!(settings.eps >= 0) || !Number.isFinite(settings.eps)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Advantage eps must be a finite number >= 0, got ${describeValue(settings.eps)}.`,
    });
  }
}

/**
 * Outcome advantages of one group of G rollouts of the same prompt:
 * A_i = (R_i - mean(R)) / (std(R) + eps).
 */
export function groupAdvantages(rewards: ArrayLike<number>, settings: GroupAdvantageSettings): Float64Array {
  assertFinite(rewards, 'rewards');
  assertAdvantageSettings(settings);
  return standardize(rewards, settings); // [G]
}

/**
 * Advantages of many groups stored back to back: `groupSizes[g]` rewards belong to group g.
 * Each group is normalised on its own.
 */
export function batchGroupAdvantages(
  rewards: ArrayLike<number>,
  groupSizes: ArrayLike<number>,
  settings: GroupAdvantageSettings,
): Float64Array {
  let total = 0;
  for (let group = 0; group < groupSizes.length; group++) total += groupSizes[group] as number;
  if (total !== rewards.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Group sizes add up to ${total} but ${rewards.length} rewards were given.`,
      details: { total, rewards: rewards.length },
    });
  }
  const result = new Float64Array(rewards.length); // [sum of G]
  let offset = 0;
  for (let group = 0; group < groupSizes.length; group++) {
    const size = groupSizes[group] as number;
    const slice = Array.prototype.slice.call(rewards, offset, offset + size) as number[];
    result.set(groupAdvantages(slice, settings), offset);
    offset += size;
  }
  return result;
}
