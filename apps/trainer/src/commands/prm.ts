import { readJsonl } from '@agentflow/core';
import { createPrmScorer, evaluatePrm, labelMean, loadPrm, prmExampleSchema } from '@agentflow/prm';
import { z } from 'zod';
import type { RegisterCommand } from './command-context';
import { parseOptions } from './label/parse-options';

const prmEvalOptionsSchema = z
  .object({
    prm: z.string().min(1).describe('PRM checkpoint folder (agentflow train-prm --out).'),
    data: z.string().min(1).describe('Held-out labelled examples JSONL.'),
    labelThreshold: z.coerce.number().min(0).max(1).default(0.5).describe('First-error F1: a label below it is an error.'),
    scoreThreshold: z.coerce.number().min(0).max(1).default(0.5).describe('First-error F1: a score below it is an error.'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
  })
  .strict();

/** JSON has no NaN: an undefined metric prints as null. */
function finiteOrNull(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}

/** `agentflow prm eval --prm DIR --data FILE`: every PRM metric as JSON on stdout. */
export const registerPrmCommand: RegisterCommand = (program, io) => {
  const prm = program.command('prm').description('Process reward model tools.');
  prm
    .command('eval')
    .description('Score held-out labelled steps with a PRM and print MSE, correlations, best-of-N and first-error F1 as JSON.')
    .requiredOption('--prm <dir>', 'PRM checkpoint folder')
    .requiredOption('--data <file>', 'held-out labelled examples JSONL')
    .option('--label-threshold <x>', 'first-error F1: label threshold', '0.5')
    .option('--score-threshold <x>', 'first-error F1: score threshold', '0.5')
    .option('--device <device>', 'auto | cuda | cpu', 'auto')
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOptions('prm eval', prmEvalOptionsSchema, raw);
      const examples = readJsonl(options.data, { schema: prmExampleSchema });
      const model = await loadPrm(options.prm, { device: options.device });
      try {
        const scores = await createPrmScorer(model).score(examples);
        // The constant baseline predicts the training mean; a checkpoint without one falls back to this set's.
        const trainingLabelMean = model.trainingLabelMean ?? labelMean(examples);
        const report = evaluatePrm(examples, scores, {
          trainingLabelMean,
          labelThreshold: options.labelThreshold,
          scoreThreshold: options.scoreThreshold,
        });
        io.stdout(
          `${JSON.stringify({ prm: options.prm, data: options.data, trainingLabelMean, ...report }, finiteOrNull, 2)}\n`,
        );
      } finally {
        await model.release();
      }
    });
};
