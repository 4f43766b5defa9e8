import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, createRandom, readConfigFile, readJsonl, type Stage } from '@agentflow/core';
import {
  calibrationBins,
  collectedSteps,
  createPrm,
  evaluatePrm,
  type LabelSummary,
  nothingCollectedError,
  type PrmExample,
  savePrm,
  splitByTrajectory,
} from '@agentflow/prm';
import type { RunSummary } from '@agentflow/eval';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { plannerPhases } from '../pipeline/planner-checkpoints';
import { collectedStepsAdvice, labelSummaryPath, labelsPath, trajectoriesToLabel } from './label';

export type PrmStageResult = RunSummary['prm'] & { trainExamples: number; bestEpoch: number };

/**
 * Why labels.jsonl gives the PRM nothing to learn from: what collect yielded, when that is the
 * cause; otherwise the label stage, with why it stopped when its summary says so.
 */
function nothingToLearnError(context: PipelineContext, lines: number): AgentFlowError {
  const { run } = context;
  const upstream = nothingCollectedError('train-prm', collectedSteps(trajectoriesToLabel(context)), collectedStepsAdvice(context));
  if (upstream) return upstream;
  const path = labelsPath(context);
  const summaryPath = labelSummaryPath(context);
  const stopped = existsSync(summaryPath) ? (readConfigFile(summaryPath) as Partial<LabelSummary>).stopped : undefined;
  const label = run.isStageDone('label')
    ? `The label stage is recorded done: remove "label" from the stages of ${run.paths.state} and resume (agentflow run --resume ${run.root}) to label again`
    : `The label stage has not finished${stopped ? `; it stopped: ${stopped.replace(/\.$/, '')}` : ''}. Resume (agentflow run --resume ${run.root}) to run it`;
  return new AgentFlowError({
    code: 'RUNTIME_ERROR',
    message: `train-prm: ${path} ${!existsSync(path) ? 'is missing' : lines === 0 ? 'is empty' : `holds no step the PRM can learn from (${lines} labelled, all format errors)`}, though the collect stage yielded steps to label. ${label}, or use train.credit kind outcome, which needs no labels.`,
    details: { reason: 'no-labels', path, lines },
  });
}

/**
 * Trains a regression-head PRM on `examples` (three quarters of their trajectories; the rest
 * measure it, split by trajectory, so no trajectory is on both sides) and saves it to `outDir`.
 * The backbone is the warm-started planner (its adapter merged), read frozen unless
 * `prm.trainable` (or `prm.lora`) trains LoRA on it or its weights in full; the head learns.
 * Each epoch's losses go to metrics.jsonl under `metricsStage`.
 */
export async function trainPrmOn(
  context: PipelineContext,
  examples: readonly PrmExample[],
  settings: { outDir: string; metricsStage: string; onEpoch?: (epoch: number, trainLoss: number) => void },
): Promise<PrmStageResult> {
  const { config, run } = context;
  const split = splitByTrajectory(
    examples.map((example) => example.trajectoryId),
    config.prm.validationFraction,
    createRandom(config.seed).fork('prm-split'),
  );
  const train = split.train.map((index) => examples[index]!);
  const heldOut = split.validation.map((index) => examples[index]!);
  let backbone: string;
  if ('path' in config.prm.backbone) backbone = config.prm.backbone.path;
  else backbone = await plannerPhases(context).writeMergedWarm();
  const prm = await createPrm({
    // The PRM reads prompts (input 'chat') as the planner's chat template rendered them.
    backbone: { kind: 'folder', path: backbone, chatTemplateKwargs: config.policy.chatTemplateKwargs },
    device: config.device,
    input: config.prm.input,
    confidence: config.prm.confidence,
    headHidden: config.prm.headHidden,
    stepResult: config.prm.stepResult,
    // What trains with the head: prm.trainable, or its earlier spelling prm.lora (the config refuses both).
    ...(config.prm.trainable ? { trainable: config.prm.trainable } : {}),
    ...(config.prm.lora ? { lora: config.prm.lora } : {}),
  });
  try {
    const report = await prm.train(train, {
      epochs: config.prm.epochs,
      patience: config.prm.patience,
      loss: config.prm.loss,
      learningRate: config.prm.learningRate,
      loraLearningRate: config.prm.loraLearningRate,
      backboneLearningRate: config.prm.backboneLearningRate,
      recompute: config.policy.recompute,
      seed: config.seed,
      onEpoch: (epoch) => {
        run.appendMetrics([{ stage: settings.metricsStage, step: epoch.epoch, trainLoss: epoch.trainLoss, validationLoss: epoch.validationLoss }]);
        settings.onEpoch?.(epoch.epoch, epoch.trainLoss);
      },
    });
    const scores = await prm.score(heldOut);
    const evaluation = evaluatePrm(heldOut, scores, { trainingLabelMean: report.trainingLabelMean });
    await savePrm(prm, settings.outDir);
    return {
      mse: evaluation.mse,
      mse_constant: evaluation.constantPredictorMse,
      pearson: Number.isFinite(evaluation.pearson) ? evaluation.pearson : null,
      spearman: Number.isFinite(evaluation.spearman) ? evaluation.spearman : null,
      n: heldOut.length,
      calibration: calibrationBins(scores, heldOut.map((example) => example.label)),
      trainExamples: train.length,
      bestEpoch: report.bestEpoch,
    };
  } finally {
    await prm.release();
  }
}

/** Trains the run's PRM ({@link trainPrmOn}) on the label stage's steps into `checkpoints/prm`. */
export const trainPrmStage: Stage<PipelineContext> = {
  name: 'train-prm',
  async run(context, emit) {
    const { config, run } = context;
    const labelled = readJsonl<PrmExample>(labelsPath(context), { allowMissing: true });
    const examples = labelled.filter((example) => example.action !== null);
    if (examples.length === 0) throw nothingToLearnError(context, labelled.length);
    return trainPrmOn(context, examples, {
      outDir: join(run.paths.checkpoints, 'prm'),
      metricsStage: 'train-prm',
      onEpoch: (epoch, trainLoss) => emit({ type: 'progress', stage: 'train-prm', completed: epoch, total: config.prm.epochs, metrics: { loss: trainLoss } }),
    });
  },
};
