import { AgentFlowError } from '@agentflow/core';

/**
 * The check of a warm start's result. A warm start that ends with a high loss, or that cannot
 * answer held-back training tasks, hands RL a policy whose rollouts all fail (no group with
 * mixed rewards, nothing to learn from): such an attempt is redone from a new initialisation.
 */
export interface WarmStartCheck {
  /** The last N training tasks are held back from the demonstrations and answered after the warm start (see {@link heldOutSplit}). */
  heldOutTasks: number;
  /** Accuracy on the held-back tasks an attempt must reach. */
  minAccuracy: number;
  /** The last epoch's mean loss an attempt must not exceed. */
  maxLoss: number;
  /** An attempt whose loss after epoch `afterEpoch` is above `aboveLoss` (or NaN) is abandoned at once; null: never. */
  abandon: { afterEpoch: number; aboveLoss: number } | null;
  /** Initialisations tried before giving up: attempt k draws with {@link warmStartInitSeed}(seed, k). */
  attempts: number;
}

/** What one warm-start attempt reached, and whether it passed the check. */
export interface WarmStartAttempt {
  attempt: number;
  /** The seed the attempt drew its policy (and adapter) with. */
  initSeed: number;
  /** Epochs it ran (fewer than asked when abandoned). */
  epochs: number;
  finalLoss: number | null;
  /** Accuracy on the held-back training tasks; null when it was not measured (an attempt failed on its loss, or none held back). */
  heldOutAccuracy: number | null;
  ok: boolean;
  /** Why it failed, for a warning and the final error. */
  reason?: string;
}

/** Attempt k's initialisation seed: the seed itself for the first, then 1000 apart (never another run seed's first). */
export const warmStartInitSeed = (seed: number, attempt: number) => seed + 1000 * attempt;

/**
 * The demonstrated training tasks and those held back for the check: the last `heldOutTasks`
 * of the split are never demonstrated; the first `demonstrations` of the others are (all when
 * null or absent). Holding back every task is an INVALID_ARGUMENT error.
 */
export function heldOutSplit<Item>(
  train: readonly Item[],
  settings: { heldOutTasks: number; demonstrations?: number | null },
): { taught: Item[]; heldOut: Item[] } {
  const held = settings.heldOutTasks;
  if (held > 0 && held >= train.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `heldOutTasks is ${held}, but there are ${train.length} training task(s): hold back fewer, or check without held-back tasks.`,
      details: { heldOutTasks: held, trainTasks: train.length },
    });
  }
  const rest = train.slice(0, train.length - held);
  return { taught: rest.slice(0, settings.demonstrations ?? undefined), heldOut: train.slice(train.length - held) };
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
export async function checkWarmStartAttempt(
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
