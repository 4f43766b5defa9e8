import { resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import {
  BENCHMARK_EVAL_STAGE,
  evalDirectoryOf,
  formatEvalSummary,
  isEvalDirectory,
  readEvalConfig,
  runBenchmarkEval,
} from '@agentflow/eval';
import { createProgressReporter } from '../../progress/progress-reporter';
import type { CommandContext } from '../command-context';
import { progressModeOf } from '../run';
import { type BenchmarkOptions, type EvalCommandOptions, optionOfSettingsKey } from './eval-options';
import { openEvalModels } from './eval-models';
import { resolveEvalConnection, resolveEvalSettings } from './resolve-eval-settings';

/** Which eval directory the command names, and whether it must hold an eval already. */
function targetOf(options: EvalCommandOptions): { root: string; mustExist: boolean } {
  if (options.out !== undefined && options.resume !== undefined && resolve(options.out) !== resolve(options.resume)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--out ${options.out} and --resume ${options.resume} name different folders; give one of them.`,
    });
  }
  const root = options.resume ?? options.out;
  if (root === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'A benchmark eval needs --out DIR (where eval.jsonl, trajectories.jsonl and eval.json go).',
    });
  }
  return { root, mustExist: options.resume !== undefined };
}

const resumeCommand = (root: string) => `\`agentflow eval --resume ${root}\``;

/**
 * The benchmark mode of `agentflow eval`: resolves the settings (on `--resume DIR`, the
 * recorded ones with the options given laid over them), runs @agentflow/eval's
 * `runBenchmarkEval` with progress on stderr (`--json`: JSON lines on stdout), prints the
 * summary. Ctrl-C keeps the records.
 */
export async function runBenchmarkCommand(options: EvalCommandOptions, given: BenchmarkOptions, context: CommandContext): Promise<void> {
  if (options.set !== undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--set ${options.set.join(' ')}: --set overrides a run directory's config; a benchmark eval takes its settings from its options.`,
    });
  }
  const { root, mustExist } = targetOf(options);
  const exists = isEvalDirectory(root);
  if (mustExist && !exists) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--resume ${root}: ${evalDirectoryOf(root).config} is missing; expected a directory written by \`agentflow eval --planner ... --out DIR\`.`,
    });
  }
  // `--resume DIR` alone continues with the recorded settings; a full command line is compared with them.
  const recorded = exists ? readEvalConfig(evalDirectoryOf(root)) : undefined;
  const base = given.planner === undefined ? recorded?.settings : undefined;
  const settings = resolveEvalSettings(given, base);
  const connection = resolveEvalConnection(given, recorded?.connection);

  const mode = progressModeOf(options);
  const reporter = createProgressReporter({ mode, stages: [BENCHMARK_EVAL_STAGE], write: mode === 'json' ? context.stdout : context.stderr });
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const { directory, summary } = await runBenchmarkEval({
      root,
      settings,
      openModels: (opened) => openEvalModels(opened, connection),
      concurrency: connection.concurrency,
      connection,
      emit: (event) => reporter.handle(event),
      onStart: (directory, resumed) => {
        if (mode !== 'json' && mode !== 'quiet') context.stderr(`${resumed ? 'Resuming' : 'Starting'} eval of ${settings.planner} on ${settings.data.path} in ${directory.root}\n`);
      },
      signal: interrupt.signal,
      resumeCommand,
      // The refusals of another eval in --out, in the command's words.
      wording: { optionOf: optionOfSettingsKey, givenBy: 'this command gives', folderOption: '--out' },
    });
    reporter.close();
    if (mode === 'json') context.stdout(`${JSON.stringify({ type: 'summary', path: directory.summary, ...summary })}\n`);
    else context.stdout(`${formatEvalSummary(summary)}\nDone: ${directory.summary}\nPage: ${directory.page}\n`);
  } catch (error) {
    reporter.close();
    throw error;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}
