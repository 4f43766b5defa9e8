import { existsSync, readFileSync } from 'node:fs';
import { AgentFlowError, type ChatMessage, type TrainablePolicy, writeFileAtomic } from '@agentflow/core';
import { type SupervisedFineTuneSettings, supervisedFineTune } from '../engine/supervised-fine-tune';
import type { OpenedPolicy } from '../policy/opened-policy';
import { abandonedEarly, checkWarmStart, type WarmStartCheck, type WarmStartVerdict } from './warm-start-check';

/** One supervised sample: a decision's prompt messages and the completion to learn (`@agentflow/flow`'s `DemonstrationSample` is one). */
export interface SupervisedSample {
  prompt: readonly ChatMessage[];
  completion: string;
}

/** What the warm start needs of an opened policy; `openLoraPolicy`'s and `openFullPolicy`'s results are. */
export interface WarmStartPolicy {
  policy: Pick<TrainablePolicy, 'accumulateGradients' | 'applyGradients' | 'save'> & { release(): Promise<void> };
  encodeExample: OpenedPolicy['encodeExample'];
}

/** Settings of {@link runSupervisedWarmStart}: supervisedFineTune's, the check, where it writes, and the pieces it calls. */
export interface SupervisedWarmStartSettings<Policy extends WarmStartPolicy> extends Omit<SupervisedFineTuneSettings, 'seed' | 'startEpoch' | 'onEpoch'> {
  /** Seeds each epoch's shuffle, and is passed to `prepare` and `openPolicy` (a random model's or a fresh adapter's draw). */
  seed: number;
  /** What the policy learns, encoded by the opened policy (its tokenizer may be new). */
  samples: readonly SupervisedSample[];
  /** Checks the result; a warm start that fails it is a RUNTIME_ERROR naming what it reached. null: accepted whatever it reached. */
  check: WarmStartCheck | null;
  /** The policy's checkpoint (an adapter, or a model folder when it trains in full), saved after every epoch (and once with 0 epochs). */
  checkpointDir: string;
  /** The progress file (epochs done and their losses), written atomically after every epoch: a killed warm start resumes from it at the next epoch. */
  progressPath: string;
  /** Makes what the policy opens on, e.g. a random model drawn with `seed`; called before the open (a resume too: keep it idempotent). */
  prepare?(seed: number): Promise<void>;
  /** Opens the policy: what is saved in `checkpointDir` when there is something (with its optimiser state), else a fresh adapter drawn with `seed` (or the weights as they are). */
  openPolicy(seed: number): Promise<Policy>;
  /** Accuracy of the trained policy on the held-back tasks, for the check; absent (or null) when none are held back. */
  heldOutAccuracy?(policy: Policy): Promise<number | null>;
  /**
   * Called once the policy is open, before its first epoch, with the epochs already done and their
   * losses (a resume): a caller that logs each epoch can add what a kill between the progress
   * file and its own log left out.
   */
  onStart?(progress: { epochsDone: number; losses: readonly number[] }): void | Promise<void>;
  /** Called after each epoch, once its checkpoint and progress are written (`epoch` counts from 1). */
  onEpoch?(progress: { epoch: number; loss: number }): void | Promise<void>;
  /** What to change when the check fails, appended to the error. Default: train longer, or lower the check. */
  remedy?: string;
}

/** What the warm start reached. */
export interface SupervisedWarmStartResult {
  /** Mean loss of each of its epochs (resumed ones included). */
  losses: number[];
  finalLoss: number | null;
  /** With a check: what it measured (always passed: a failed check throws). */
  check?: WarmStartVerdict;
}

/** Where a warm start stands: its epochs done and their losses. */
interface WarmStartProgress {
  epochsDone: number;
  losses: number[];
}

/** Thrown from an epoch's callback to stop a warm start whose loss already shows it failing. */
class AbandonWarmStart extends Error {}

function readProgress(path: string): WarmStartProgress {
  if (!existsSync(path)) return { epochsDone: 0, losses: [] };
  try {
    const { epochsDone, losses } = JSON.parse(readFileSync(path, 'utf8')) as WarmStartProgress;
    return { epochsDone, losses };
  } catch (error) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `The warm start's progress file ${path} is not JSON: remove it to start the warm start over.`, cause: error });
  }
}

/**
 * A supervised warm start ({@link supervisedFineTune} on the samples) that checks its result:
 * after every epoch the policy is saved to `checkpointDir` and the progress file written, so a
 * killed warm start resumes at the next epoch with the same weights, optimiser state and
 * shuffles. With a `check`, a warm start whose loss is still high after `abandon.afterEpoch` is
 * stopped there, a finished one is judged on its final loss and then on `heldOutAccuracy`, and
 * one that fails is a RUNTIME_ERROR naming what it reached: nothing downstream trains on a
 * policy that cannot answer.
 */
export async function runSupervisedWarmStart<Policy extends WarmStartPolicy>(settings: SupervisedWarmStartSettings<Policy>): Promise<SupervisedWarmStartResult> {
  const { samples, check, checkpointDir, progressPath, epochs, seed } = settings;
  const progress = readProgress(progressPath);
  await settings.prepare?.(seed);
  const opened = await settings.openPolicy(seed);
  let verdict: WarmStartVerdict | undefined;
  try {
    const examples = samples.map((sample) => opened.encodeExample(sample.prompt, sample.completion));
    await settings.onStart?.({ epochsDone: progress.epochsDone, losses: [...progress.losses] });
    try {
      await supervisedFineTune(opened.policy, examples, {
        epochs,
        batchSize: settings.batchSize,
        ...(settings.microBatchRows === undefined ? {} : { microBatchRows: settings.microBatchRows }),
        learningRate: settings.learningRate,
        warmupSteps: settings.warmupSteps,
        schedule: settings.schedule,
        ...(settings.maxGradNorm === undefined ? {} : { maxGradNorm: settings.maxGradNorm }),
        seed,
        startEpoch: progress.epochsDone,
        onEpoch: async (epoch, loss) => {
          progress.epochsDone = epoch + 1;
          progress.losses.push(loss);
          await opened.policy.save(checkpointDir);
          writeFileAtomic(progressPath, JSON.stringify(progress));
          await settings.onEpoch?.({ epoch: epoch + 1, loss });
          if (check && abandonedEarly(check, epoch + 1, loss)) throw new AbandonWarmStart();
        },
      });
    } catch (error) {
      if (!(error instanceof AbandonWarmStart)) throw error;
    }
    if (epochs === 0) await opened.policy.save(checkpointDir);
    const heldOutAccuracy = settings.heldOutAccuracy;
    verdict = check
      ? await checkWarmStart(check, { losses: progress.losses, epochs }, () => (heldOutAccuracy ? heldOutAccuracy(opened) : Promise.resolve(null)))
      : undefined;
  } finally {
    await opened.policy.release();
  }
  if (verdict && !verdict.ok) {
    throw new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `The warm start failed its check: it ${verdict.reason}. ${settings.remedy ?? 'Training would start from a policy that cannot answer; train longer (epochs), or lower the check.'}`,
      details: { check: verdict },
    });
  }
  return { losses: [...progress.losses], finalLoss: progress.losses.at(-1) ?? null, ...(verdict ? { check: verdict } : {}) };
}
