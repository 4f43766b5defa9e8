import { AgentFlowError, createRandom, type Random } from '@agentflow/core';
import { mean } from '../metrics/regression';
import { meanPrmLoss } from './prm-loss';
import type { PrmEpochRecord, PrmTrainingConfig, PrmTrainingReport } from './prm-training-settings';

/** Labelled rows split by trajectory into training and validation indices. */
export function splitByTrajectory(
  trajectoryIds: readonly string[],
  validationFraction: number,
  random: Random,
): { train: number[]; validation: number[] } {
  const unique = [...new Set(trajectoryIds)].sort();
  random.shuffle(unique);
  // At least one trajectory on each side when a split is asked for and possible.
  let held = Math.round(unique.length * validationFraction);
  if (validationFraction > 0 && unique.length >= 2) held = Math.min(Math.max(held, 1), unique.length - 1);
  const validationIds = new Set(unique.slice(0, held));
  const train: number[] = [];
  const validation: number[] = [];
  trajectoryIds.forEach((id, index) => {
    (validationIds.has(id) ? validation : train).push(index);
  });
  return { train, validation };
}

/** What the loop needs from a model; the head-only and LoRA trainers each provide one. */
export interface TrainableScorer {
  /**
   * Resets to the constant predictor of `trainingLabelMean` (score weight 0, bias = its logit), a
   * hidden layer of the head drawn anew from `random` and standardising its inputs over the rows `train`.
   */
  reset(trainingLabelMean: number, random: Random, train: readonly number[]): Promise<void> | void;
  /** One optimiser step on the rows `batch`; returns the batch's mean loss before the step. */
  step(batch: readonly number[]): Promise<number>;
  /** Scores of the rows `indices`. */
  predict(indices: readonly number[]): Promise<ArrayLike<number>>;
  /** Captures the trainable parameters; calling the result puts them back. */
  snapshot(): () => void;
}

/**
 * The training loop shared by every PRM variant: split by trajectory, minibatches in a
 * seeded order, validation after each epoch, early stopping on the validation loss, and
 * the best parameters restored at the end. With no validation set the training rows stand in.
 */
export async function runTrainingLoop(settings: {
  model: TrainableScorer;
  labels: Float32Array;
  trajectoryIds: readonly string[];
  config: PrmTrainingConfig;
  onEpoch?: (record: PrmEpochRecord, improved: boolean) => Promise<void> | void;
}): Promise<PrmTrainingReport> {
  const { model, labels, config } = settings;
  if (labels.length === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'trainPrm needs at least one labelled step with a parsed action.' });
  }
  const random = createRandom(config.seed);
  const { train, validation } = splitByTrajectory(settings.trajectoryIds, config.validationFraction, random.fork('split'));
  const trainingLabelMean = mean(Float32Array.from(train, (index) => labels[index]!));
  const validationIndices = validation.length > 0 ? validation : train;
  const validationLabels = Float32Array.from(validationIndices, (index) => labels[index]!);
  const order = random.fork('batches');
  // Forked after the split and the batch order, so a linear head trains exactly as before hidden layers existed.
  await model.reset(trainingLabelMean, random.fork('head'), train);
  const epochs: PrmEpochRecord[] = [];
  let best = { loss: Number.POSITIVE_INFINITY, epoch: 0, restore: model.snapshot() };
  let stoppedEarly = false;
  for (let epoch = 1; epoch <= config.epochs; epoch++) {
    const shuffled = order.shuffle([...train]);
    let lossSum = 0;
    for (let start = 0; start < shuffled.length; start += config.batchSize) {
      const batch = shuffled.slice(start, start + config.batchSize);
      lossSum += (await model.step(batch)) * batch.length;
    }
    const scores = await model.predict(validationIndices);
    const record: PrmEpochRecord = {
      epoch,
      trainLoss: lossSum / shuffled.length,
      validationLoss: meanPrmLoss(config.loss, scores, validationLabels),
      validationMse: meanPrmLoss('mse', scores, validationLabels),
    };
    epochs.push(record);
    const improved = record.validationLoss < best.loss - 1e-9;
    if (improved) best = { loss: record.validationLoss, epoch, restore: model.snapshot() };
    await settings.onEpoch?.(record, improved);
    if (epoch - best.epoch >= config.patience) {
      stoppedEarly = epoch < config.epochs;
      break;
    }
  }
  best.restore();
  return {
    epochs,
    bestEpoch: best.epoch,
    stoppedEarly,
    trainExamples: train.length,
    validationExamples: validation.length,
    trainingLabelMean,
  };
}
