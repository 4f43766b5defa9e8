import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { AgentFlowError, type ChatMessage, type TrainablePolicy, writeFileAtomic } from '@agentflow/core';
import { type SupervisedFineTuneSettings, supervisedFineTune } from '../engine/supervised-fine-tune';
import type { OpenedPolicy } from '../policy/opened-policy';
import { abandonedEarly, checkWarmStartAttempt, type WarmStartAttempt, type WarmStartCheck, warmStartInitSeed } from './warm-start-check';

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
  /** Seeds each epoch's shuffle and, through {@link warmStartInitSeed}, each attempt's initialisation. */
  seed: number;
  /** What the policy learns, encoded by each attempt's policy (its tokenizer may be new). */
  samples: readonly SupervisedSample[];
  /** Checks each attempt and retries failing ones from a new initialisation; null: one attempt, accepted whatever it reached. */
  check: WarmStartCheck | null;
  /** The policy's checkpoint (an adapter, or a model folder when it trains in full), saved after every epoch (and once with 0 epochs); emptied before a new attempt. */
  checkpointDir: string;
  /** The progress file (attempt, epochs done, their losses, the failed attempts), written atomically after every epoch: a killed warm start resumes from it at the next epoch. */
  progressPath: string;
  /** Makes what an attempt's policy opens on, e.g. a random model drawn with `initSeed`; called before every open (a resume too: keep it idempotent). */
  prepare?(initSeed: number): Promise<void>;
  /** Opens the attempt's policy: what is saved in `checkpointDir` when there is something (with its optimiser state), else a fresh adapter drawn with `initSeed` (or the weights as they are). */
  openPolicy(initSeed: number): Promise<Policy>;
  /** Accuracy of the trained policy on the held-back tasks, for the check; absent (or null) when none are held back. */
  heldOutAccuracy?(policy: Policy, attempt: number): Promise<number | null>;
  /** Called once an attempt's policy is open, before its first epoch. */
  onAttempt?(attempt: { attempt: number; initSeed: number; epochsDone: number }): void | Promise<void>;
  /** Called after each epoch, once its checkpoint and progress are written (`epoch` counts from 1). */
  onEpoch?(progress: { attempt: number; epoch: number; loss: number }): void | Promise<void>;
  /** Called when an attempt failed and another follows, before its checkpoint is emptied: remove what `prepare` made for it here. */
  onRetry?(failed: WarmStartAttempt): void | Promise<void>;
  /** What to change when every attempt fails, appended to the error. Default: train longer, allow more attempts, or lower the check. */
  remedy?: string;
}

/** What the accepted attempt reached. */
export interface SupervisedWarmStartResult {
  /** Mean loss of each of its epochs (resumed ones included). */
  losses: number[];
  finalLoss: number | null;
  initSeed: number;
  /** With a check: every attempt, the failed ones first and the accepted one last. */
  attempts?: WarmStartAttempt[];
}

/** Where a warm start stands: the attempt under way, its epochs, and the attempts that failed before it. */
interface WarmStartProgress {
  attempt: number;
  epochsDone: number;
  losses: number[];
  failed: WarmStartAttempt[];
}

/** Thrown from an epoch's callback to stop an attempt whose loss already shows it failing. */
class AbandonAttempt extends Error {}

function readProgress(path: string): WarmStartProgress {
  if (!existsSync(path)) return { attempt: 0, epochsDone: 0, losses: [], failed: [] };
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as WarmStartProgress;
  } catch (error) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `The warm start's progress file ${path} is not JSON: remove it to start the warm start over.`, cause: error });
  }
}

/**
 * A supervised warm start ({@link supervisedFineTune} on the samples) that checks its result and
 * retries: after every epoch the adapter is saved to `checkpointDir` and the progress file
 * written, so a killed warm start resumes at the next epoch with the same adapter, optimiser
 * state and shuffles. With a `check`, an attempt whose loss is still high after
 * `abandon.afterEpoch` is abandoned, a finished one is judged on its final loss and then on
 * `heldOutAccuracy`, and a failing one is redone from the next initialisation (`prepare` and
 * `openPolicy` get a new seed; the checkpoint starts empty) until one passes or `attempts` have
 * failed: then a RUNTIME_ERROR names what each one reached.
 */
export async function runSupervisedWarmStart<Policy extends WarmStartPolicy>(settings: SupervisedWarmStartSettings<Policy>): Promise<SupervisedWarmStartResult> {
  const { samples, check, checkpointDir, progressPath, epochs } = settings;
  const progress = readProgress(progressPath);
  for (;;) {
    const initSeed = warmStartInitSeed(settings.seed, progress.attempt);
    await settings.prepare?.(initSeed);
    const opened = await settings.openPolicy(initSeed);
    let attempt: WarmStartAttempt | undefined;
    try {
      const examples = samples.map((sample) => opened.encodeExample(sample.prompt, sample.completion));
      await settings.onAttempt?.({ attempt: progress.attempt, initSeed, epochsDone: progress.epochsDone });
      try {
        await supervisedFineTune(opened.policy, examples, {
          epochs,
          batchSize: settings.batchSize,
          learningRate: settings.learningRate,
          warmupSteps: settings.warmupSteps,
          schedule: settings.schedule,
          ...(settings.maxGradNorm === undefined ? {} : { maxGradNorm: settings.maxGradNorm }),
          seed: settings.seed,
          startEpoch: progress.epochsDone,
          onEpoch: async (epoch, loss) => {
            progress.epochsDone = epoch + 1;
            progress.losses.push(loss);
            await opened.policy.save(checkpointDir);
            writeFileAtomic(progressPath, JSON.stringify(progress));
            await settings.onEpoch?.({ attempt: progress.attempt, epoch: epoch + 1, loss });
            if (check && abandonedEarly(check, epoch + 1, loss)) throw new AbandonAttempt();
          },
        });
      } catch (error) {
        if (!(error instanceof AbandonAttempt)) throw error;
      }
      if (epochs === 0) await opened.policy.save(checkpointDir);
      const heldOutAccuracy = settings.heldOutAccuracy;
      attempt = check
        ? await checkWarmStartAttempt(check, { attempt: progress.attempt, initSeed, losses: progress.losses, epochs }, () =>
            heldOutAccuracy ? heldOutAccuracy(opened, progress.attempt) : Promise.resolve(null),
          )
        : undefined;
    } finally {
      await opened.policy.release();
    }
    if (!attempt || attempt.ok) {
      return { losses: [...progress.losses], finalLoss: progress.losses.at(-1) ?? null, initSeed, ...(attempt ? { attempts: [...progress.failed, attempt] } : {}) };
    }
    progress.failed.push(attempt);
    if (progress.failed.length >= (check?.attempts ?? 1)) {
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message:
          `The warm start failed its check in all ${progress.failed.length} attempt(s): ${progress.failed.map((failed) => failed.reason).join('; ')}. ` +
          (settings.remedy ?? 'Training would start from a policy that cannot answer; train longer (epochs), allow more attempts, or lower the check.'),
        details: { attempts: progress.failed },
      });
    }
    await settings.onRetry?.(attempt);
    // The next attempt starts from nothing: a new initialisation and an empty checkpoint.
    rmSync(checkpointDir, { recursive: true, force: true });
    mkdirSync(checkpointDir, { recursive: true });
    Object.assign(progress, { attempt: progress.attempt + 1, epochsDone: 0, losses: [] });
    writeFileAtomic(progressPath, JSON.stringify(progress));
  }
}
