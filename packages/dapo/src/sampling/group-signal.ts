import { AgentFlowError, assertNever } from '@agentflow/core';
import { type StepCredit, needsStepScores } from '../math/step-credit';
import { assertFinite, standardDeviation } from '../math/statistics';
import { DEFAULT_STD_THRESHOLD, isInformativeGroup } from './group-filter';

/**
 * What dynamic sampling keeps a group for:
 * - 'outcome': its outcome rewards differ (DAPO 3.2);
 * - 'prm': its PRM step scores vary (AgentFlow-Pro: "discard samples with near-zero variance");
 * - 'either': one or the other, so that with process credit an all-right or all-wrong group
 *   whose steps the PRM tells apart still trains.
 */
export type GroupSignal = 'outcome' | 'prm' | 'either';

/** AgentFlow-Pro's threshold: step scores whose population std is below it do not vary. */
export const DEFAULT_PRM_STD_THRESHOLD = 1e-3;

/** How {@link hasGroupSignal} decides. */
export interface GroupSignalSettings {
  signal: GroupSignal;
  /** Population std of the outcome rewards at or above which they differ. */
  stdThreshold: number;
  /** Population std of the step scores at or above which they vary. */
  prmStdThreshold: number;
}

/**
 * True when a group's step scores vary: the population std over all steps of all its rollouts
 * is at least `threshold`. That is the population process credit normalises over
 * (DeepSeekMath 4.1.3), so a group passes exactly when its process advantages are not all 0;
 * it also keeps a group whose rollouts all took the same wasted step, which a comparison of
 * step j across rollouts would drop.
 */
export function stepScoresVary(stepScores: ReadonlyArray<ArrayLike<number>>, threshold = DEFAULT_PRM_STD_THRESHOLD): boolean {
  const flat: number[] = []; // [all steps of the group]
  stepScores.forEach((row, rollout) => {
    assertFinite(row, `stepScores[${rollout}]`);
    for (let step = 0; step < row.length; step++) flat.push(row[step] as number);
  });
  return standardDeviation(flat, 'population') >= threshold;
}

/** Whether a group has the learning signal that `settings.signal` asks for. */
export function hasGroupSignal(
  rewards: ArrayLike<number>,
  stepScores: ReadonlyArray<ArrayLike<number>> | undefined,
  settings: GroupSignalSettings,
): boolean {
  const scoresVary = () => {
    if (stepScores === undefined) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Dynamic sampling signal '${settings.signal}' needs the group's step scores; none were given (use a credit that uses step scores, or signal 'outcome').`,
      });
    }
    return stepScoresVary(stepScores, settings.prmStdThreshold);
  };
  switch (settings.signal) {
    case 'outcome':
      return isInformativeGroup(rewards, settings.stdThreshold);
    case 'prm':
      return scoresVary();
    case 'either':
      return isInformativeGroup(rewards, settings.stdThreshold) || scoresVary();
    default:
      return assertNever(settings.signal, 'dynamic sampling signal');
  }
}

/**
 * The signal a config's dynamic sampling uses: the one it sets; else 'either' when the credit
 * uses step scores (process-sum, process-min, mix) and 'outcome' otherwise, so a config
 * without `signal` keeps DAPO's outcome filter for outcome and gigpo credit.
 */
export function resolveGroupSignal(
  credit: StepCredit,
  dynamicSampling: { signal?: GroupSignal; stdThreshold?: number; prmStdThreshold?: number },
): GroupSignalSettings {
  return {
    signal: dynamicSampling.signal ?? (needsStepScores(credit) ? 'either' : 'outcome'),
    stdThreshold: dynamicSampling.stdThreshold ?? DEFAULT_STD_THRESHOLD,
    prmStdThreshold: dynamicSampling.prmStdThreshold ?? DEFAULT_PRM_STD_THRESHOLD,
  };
}
