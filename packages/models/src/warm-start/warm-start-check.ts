import { AgentFlowError } from '@agentflow/core';

/**
 * The check of a warm start's result. A warm start that ends with a high loss, or that cannot
 * answer held-back training tasks, hands RL a policy whose rollouts all fail (no group with
 * mixed rewards, nothing to learn from): such a warm start stops the run instead.
 */
export interface WarmStartCheck {
  /** The last N training tasks are held back from the demonstrations and answered after the warm start (see {@link heldOutSplit}). */
  heldOutTasks: number;
  /** Accuracy on the held-back tasks the warm start must reach. */
  minAccuracy: number;
  /** The last epoch's mean loss the warm start must not exceed. */
  maxLoss: number;
  /** A warm start whose loss after epoch `afterEpoch` is above `aboveLoss` (or NaN) is stopped at once; null: never. */
  abandon: { afterEpoch: number; aboveLoss: number } | null;
}

/** What a warm start reached, and whether it passed the check. */
export interface WarmStartVerdict {
  /** Epochs it ran (fewer than asked when abandoned). */
  epochs: number;
  finalLoss: number | null;
  /** Accuracy on the held-back training tasks; null when it was not measured (it failed on its loss, or none held back). */
  heldOutAccuracy: number | null;
  ok: boolean;
  /** Why it failed, for a warning and the final error. */
  reason?: string;
}

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

/** True when the loss after `epoch` shows the warm start failing (`check.abandon`). */
export function abandonedEarly(check: WarmStartCheck, epoch: number, loss: number): boolean {
  return check.abandon !== null && epoch === check.abandon.afterEpoch && !(loss <= check.abandon.aboveLoss);
}

/**
 * Judges a warm start: its final loss against `maxLoss` (one abandoned early fails on its loss
 * and is not measured further), then its accuracy on the held-back tasks against `minAccuracy`.
 */
export async function checkWarmStart(
  check: WarmStartCheck,
  reached: { losses: readonly number[]; epochs: number },
  heldOutAccuracy: () => Promise<number | null>,
): Promise<WarmStartVerdict> {
  const finalLoss = reached.losses.at(-1) ?? null;
  const base = { epochs: reached.losses.length, finalLoss };
  if (reached.losses.length < reached.epochs) {
    return { ...base, heldOutAccuracy: null, ok: false, reason: `abandoned after epoch ${reached.losses.length} at loss ${finalLoss?.toFixed(3)} (above ${check.abandon?.aboveLoss})` };
  }
  if (finalLoss !== null && !(finalLoss <= check.maxLoss)) {
    return { ...base, heldOutAccuracy: null, ok: false, reason: `ended at loss ${finalLoss.toFixed(3)} (above maxLoss ${check.maxLoss})` };
  }
  const accuracy = await heldOutAccuracy();
  if (accuracy !== null && accuracy < check.minAccuracy) {
    return { ...base, heldOutAccuracy: accuracy, ok: false, reason: `answered ${(100 * accuracy).toFixed(1)}% of the held-back tasks (below minAccuracy ${check.minAccuracy})` };
  }
  return { ...base, heldOutAccuracy: accuracy, ok: true };
}
