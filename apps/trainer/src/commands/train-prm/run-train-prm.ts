import { appendJsonl, readJsonl } from '@agentflow/core';
import { createPrm, prmExampleSchema, savePrm } from '@agentflow/prm';
import { join } from 'node:path';
import type { CommandContext } from '../command-context';
import type { TrainPrmOptions } from './train-prm-options';

/** Runs `agentflow train-prm`: trains, checkpoints on every improvement, prints a JSON summary. */
export async function runTrainPrm(options: TrainPrmOptions, io: CommandContext): Promise<void> {
  const examples = readJsonl(options.data, { schema: prmExampleSchema });
  const prm = await createPrm({
    backbone: options.backbone
      ? { kind: 'folder', path: options.backbone }
      : { kind: 'random', preset: options.preset, seed: options.seed },
    ...(options.loraRank > 0 ? { lora: { rank: options.loraRank, alpha: options.loraAlpha ?? 2 * options.loraRank } } : {}),
    headHidden: options.headHidden,
    maxTokens: options.maxTokens,
    device: options.device,
  });
  const logPath = join(options.out, 'training-log.jsonl');
  try {
    const report = await prm.train(examples, {
      loss: options.loss,
      epochs: options.epochs,
      batchSize: options.batchSize,
      learningRate: options.learningRate,
      loraLearningRate: options.loraLearningRate,
      validationFraction: options.validationFraction,
      patience: options.patience,
      seed: options.seed,
      onEpoch: async (record, improved) => {
        appendJsonl(logPath, [{ ...record, improved }]);
        // The best parameters so far are the current ones: a killed run keeps them.
        if (improved) await savePrm(prm, options.out);
      },
    });
    // The loop restored the best parameters; save them with the final training label mean.
    await savePrm(prm, options.out);
    const best = report.epochs[report.bestEpoch - 1];
    io.stdout(
      `${JSON.stringify({
        examples: examples.length,
        trainExamples: report.trainExamples,
        validationExamples: report.validationExamples,
        epochs: report.epochs.length,
        bestEpoch: report.bestEpoch,
        stoppedEarly: report.stoppedEarly,
        bestValidationMse: best?.validationMse ?? null,
        trainingLabelMean: report.trainingLabelMean,
        out: options.out,
      })}\n`,
    );
  } finally {
    await prm.release();
  }
}
