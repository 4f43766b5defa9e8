import { AgentFlowError, createRandom, lengthOrder, rowLength, scheduledLearningRate, type TrainablePolicy } from '@agentflow/core';

/** One supervised example: the prompt's ids and the completion's ids (ending with EOS) to learn. */
export interface SupervisedExample {
  promptIds: number[];
  completionIds: number[];
}

export interface SupervisedFineTuneSettings {
  /** Passes over the examples to reach (a resumed run passes `startEpoch`). */
  epochs: number;
  /** Examples per optimiser update. */
  batchSize: number;
  /**
   * Examples per forward and backward run at most: each update's examples are taken shortest
   * first and cut into runs of this many, so each is padded to examples of about its own length;
   * their gradients add up to the update's. Default `batchSize` (one run per update, as it was
   * drawn). Only the padding, and so the time, changes (the sums' order, in float32).
   */
  microBatchRows?: number;
  /** Peak learning rate, reached after `warmupSteps` updates of linear warm-up. */
  learningRate: number;
  warmupSteps: number;
  /** After the warm-up: cosine down to a tenth of the peak by the last update, or constant. */
  schedule: 'cosine' | 'constant';
  /** Gradient clipping by global norm. Default 1 (HF TrainingArguments' max_grad_norm). */
  maxGradNorm?: number;
  /** Seeds each epoch's shuffle: epoch e's order depends on the seed and e alone, so a resumed run shuffles the same way. */
  seed: number;
  /** Epochs already done (a resumed run); their updates count in the schedule. Default 0. */
  startEpoch?: number;
  /** Called after each epoch with its mean loss: save a checkpoint here. */
  onEpoch?(epoch: number, meanLoss: number): void | Promise<void>;
}

/** The floor of the cosine, over the peak. */
const COSINE_MIN_RATIO = 0.1;

/**
 * The learning rate of update `step` (0-based) of `totalSteps`: linear warm-up, then constant
 * or a half cosine that would reach a tenth of the peak at `step = totalSteps`, one past the
 * last update. Core's {@link scheduledLearningRate}.
 */
export function supervisedLearningRate(settings: Pick<SupervisedFineTuneSettings, 'learningRate' | 'warmupSteps' | 'schedule'>, step: number, totalSteps: number): number {
  const { learningRate: peak, warmupSteps, schedule } = settings;
  const decay =
    schedule === 'constant'
      ? { kind: 'constant' as const }
      : { kind: 'cosine' as const, steps: Math.max(1, totalSteps - warmupSteps), minRatio: COSINE_MIN_RATIO };
  return scheduledLearningRate({ peak, warmupSteps, decay }, step);
}

/**
 * Supervised fine-tuning of a policy's adapter (a warm start on demonstrations): the `nll`
 * objective, the mean negative log-likelihood of every completion token of a batch (each
 * token weighs 1 / the batch's completion tokens), AdamW through the policy's
 * `applyGradients`. Returns the mean loss of each epoch it ran.
 */
export async function supervisedFineTune(
  policy: Pick<TrainablePolicy, 'accumulateGradients' | 'applyGradients'>,
  examples: readonly SupervisedExample[],
  settings: SupervisedFineTuneSettings,
): Promise<number[]> {
  const { epochs, batchSize, seed } = settings;
  const microBatchRows = settings.microBatchRows ?? batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `batchSize must be a positive integer, got ${batchSize}.` });
  }
  if (!Number.isInteger(microBatchRows) || microBatchRows < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `microBatchRows must be a positive integer, got ${microBatchRows}.` });
  }
  if (examples.length === 0) return [];
  const batchesPerEpoch = Math.ceil(examples.length / batchSize);
  const totalSteps = Math.max(1, epochs * batchesPerEpoch);
  const losses: number[] = [];
  for (let epoch = settings.startEpoch ?? 0; epoch < epochs; epoch++) {
    const order = createRandom(seed).fork(`warm-start:${epoch}`).shuffle(examples.map((_, index) => index));
    let lossSum = 0;
    let batches = 0;
    for (let start = 0; start < order.length; start += batchSize) {
      const drawn = order.slice(start, start + batchSize).map((index) => examples[index]!);
      const tokens = drawn.reduce((sum, row) => sum + row.completionIds.length, 0);
      // Split: shortest first (ties as drawn), then runs of microBatchRows. Every token weighs 1 / the update's tokens.
      const rows = drawn.length <= microBatchRows ? drawn : lengthOrder(drawn.map(rowLength)).map((at) => drawn[at]!);
      let loss = 0;
      for (let first = 0; first < rows.length; first += microBatchRows) {
        const run = rows.slice(first, first + microBatchRows);
        const stats = await policy.accumulateGradients({
          objective: { kind: 'nll' },
          promptIds: run.map((row) => row.promptIds),
          completionIds: run.map((row) => row.completionIds),
          tokenWeights: run.map((row) => row.completionIds.map(() => 1 / tokens)),
        });
        loss += stats.loss;
      }
      await policy.applyGradients({
        learningRate: supervisedLearningRate(settings, epoch * batchesPerEpoch + batches, totalSteps),
        maxGradNorm: settings.maxGradNorm ?? 1,
      });
      lossSum += loss;
      batches++;
    }
    losses.push(lossSum / batches);
    await settings.onEpoch?.(epoch, lossSum / batches);
  }
  return losses;
}
