import { AgentFlowError } from '@agentflow/core';
import type { TaskItem } from '@agentflow/eval';
import type { RunConfig } from '../config/schema';
import type { WarmStartCheck } from '../config/warm-start-schema';

/** What one warm-start attempt reached, and whether it passed the check. */
export interface WarmStartAttempt {
  attempt: number;
  /** The seed the attempt drew its planner (preset) and adapter with. */
  initSeed: number;
  epochs: number;
  finalLoss: number | null;
  /** Accuracy on the held-back training tasks; null when it was not measured (an abandoned attempt, or none held back). */
  heldOutAccuracy: number | null;
  ok: boolean;
  /** Why it failed, for the warning and the final error. */
  reason?: string;
}

/** Attempt k's initialisation seed: the run's seed for the first, then 1000 apart (never another run seed's first). */
export const initSeedOf = (seed: number, attempt: number) => seed + 1000 * attempt;

/**
 * The demonstrated training tasks and those held back for the check: the last
 * `check.heldOutTasks` of the split are never demonstrated; the first `demonstrations` of the
 * others are (all when null).
 */
export function heldOutSplit(train: readonly TaskItem[], warmStart: RunConfig['warmStart']): { taught: TaskItem[]; heldOut: TaskItem[] } {
  const held = warmStart.check?.heldOutTasks ?? 0;
  if (held > 0 && held >= train.length) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `warmStart.check.heldOutTasks is ${held}, but the task source has ${train.length} training task(s): hold back fewer, or set warmStart.check to null.`,
    });
  }
  const rest = train.slice(0, train.length - held);
  return { taught: rest.slice(0, warmStart.demonstrations ?? undefined), heldOut: train.slice(train.length - held) };
}

/** True when an attempt's loss after `epoch` shows it failing (`check.abandon`). */
export function abandonedEarly(check: WarmStartCheck, epoch: number, loss: number): boolean {
  return check.abandon !== null && epoch === check.abandon.afterEpoch && !(loss <= check.abandon.aboveLoss);
}

/**
 * Judges one attempt: its final loss against `maxLoss` (an attempt abandoned early fails on its
 * loss and is not measured further), then its accuracy on the held-back tasks against
 * `minAccuracy`.
 */
export async function checkAttempt(
  check: WarmStartCheck,
  attempt: { attempt: number; initSeed: number; losses: readonly number[]; epochs: number },
  heldOutAccuracy: () => Promise<number | null>,
): Promise<WarmStartAttempt> {
  const finalLoss = attempt.losses.at(-1) ?? null;
  const base = { attempt: attempt.attempt, initSeed: attempt.initSeed, epochs: attempt.losses.length, finalLoss };
  const label = `attempt ${attempt.attempt + 1} (init seed ${attempt.initSeed})`;
  if (attempt.losses.length < attempt.epochs) {
    return { ...base, heldOutAccuracy: null, ok: false, reason: `${label} abandoned after epoch ${attempt.losses.length} at loss ${finalLoss?.toFixed(3)} (above ${check.abandon?.aboveLoss})` };
  }
  if (finalLoss !== null && !(finalLoss <= check.maxLoss)) {
    return { ...base, heldOutAccuracy: null, ok: false, reason: `${label} ended at loss ${finalLoss.toFixed(3)} (above maxLoss ${check.maxLoss})` };
  }
  const accuracy = await heldOutAccuracy();
  if (accuracy !== null && accuracy < check.minAccuracy) {
    return { ...base, heldOutAccuracy: accuracy, ok: false, reason: `${label} answered ${(100 * accuracy).toFixed(1)}% of the held-back tasks (below minAccuracy ${check.minAccuracy})` };
  }
  return { ...base, heldOutAccuracy: accuracy, ok: true };
}
