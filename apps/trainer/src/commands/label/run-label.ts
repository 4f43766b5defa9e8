import { assertNever, readJsonl, trajectorySchema, writeFileAtomic } from '@agentflow/core';
import { createOpenAICompatibleModel } from '@agentflow/llm';
import { consensusFilter, createJudgeLabeller, extractSteps, nothingLabelledError, type PrmExample, prmExampleSchema } from '@agentflow/prm';
import type { CommandContext } from '../command-context';
import type { LabelOptions } from './label-options';

function writeExamples(path: string, examples: readonly PrmExample[]): void {
  writeFileAtomic(path, examples.map((example) => `${JSON.stringify(example)}\n`).join(''));
}

/** Runs `agentflow label` and prints a JSON summary on stdout. */
export async function runLabel(options: LabelOptions, io: CommandContext): Promise<void> {
  switch (options.labeller) {
    case 'judge': {
      const trajectories = readJsonl(options.trajectories as string, { schema: trajectorySchema });
      const steps = trajectories.flatMap((trajectory) => extractSteps(trajectory));
      const model = createOpenAICompatibleModel({
        model: options.judgeModel,
        endpoints: [options.endpoint],
        responseFormat: options.responseFormat,
        ...(options.apiKeyEnv === '' ? {} : { apiKeyEnv: options.apiKeyEnv }),
      });
      const labeller = createJudgeLabeller({
        model,
        concurrency: options.concurrency,
        cachePath: options.cache ?? `${options.out}.judge-cache.jsonl`,
        prices: {
          ...(options.inputPrice === undefined ? {} : { inputUsdPerMillion: options.inputPrice }),
          ...(options.outputPrice === undefined ? {} : { outputUsdPerMillion: options.outputPrice }),
        },
      });
      const { examples, failures } = await labeller.label(steps);
      writeExamples(options.out, examples);
      for (const failure of failures) io.stderr(`label: step ${failure.stepId} not labelled: ${failure.error}\n`);
      io.stdout(
        `${JSON.stringify({ labeller: 'judge', trajectories: trajectories.length, steps: steps.length, labelled: examples.length, failed: failures.length, ...labeller.stats(), out: options.out })}\n`,
      );
      // Format-error steps are labelled 0 without a call: a judge that answered nothing usable leaves only those.
      if (steps.some((step) => step.action !== null) && examples.every((example) => example.action === null)) {
        const judge = { kind: 'judge' as const, model: options.judgeModel, url: options.endpoint, setting: '--endpoint, --judge-model or --response-format' };
        throw nothingLabelledError('label', judge, failures, `run this command again (${options.out} is written; judged steps are cached)`);
      }
      return;
    }
    case 'consensus': {
      const judged = readJsonl(options.judged as string, { schema: prmExampleSchema });
      const monteCarlo = readJsonl(options.monteCarlo as string, { schema: prmExampleSchema });
      const result = consensusFilter(judged, monteCarlo, { judgeThreshold: options.judgeThreshold });
      writeExamples(options.out, result.kept);
      io.stdout(
        `${JSON.stringify({ labeller: 'consensus', kept: result.kept.length, disagreed: result.disagreed, unmatched: result.unmatched, out: options.out })}\n`,
      );
      return;
    }
    default:
      assertNever(options.labeller, 'labeller');
  }
}
