import { AgentFlowError, collectOverrides } from '@agentflow/core';
import { createPythonTool } from '@agentflow/executor';
import { dryRunChecks, formatDryRun } from '../pipeline/dry-run';
import { openRun, resolveConfig } from '../pipeline/open-run';
import { createProgressReporter, type ProgressMode } from '../progress/progress-reporter';
import { runPipeline, stageNamesOf } from '../pipeline/pipeline';
import { guardedTaskSource } from '../pipeline/pipeline-context';
import { assertRunnable, runEndpoints } from '../pipeline/preflight';
import { assertChatEndpointsAnswer } from '@agentflow/llm';
import { trackRunDirectory } from '@agentflow/tracking';
import type { CommandContext, RegisterCommand } from './command-context';

export interface PipelineOptions {
  config?: string;
  out?: string;
  resume?: string;
  credit?: string;
  set?: string[];
  quiet?: boolean;
  json?: boolean;
}

export function progressModeOf(options: PipelineOptions): ProgressMode {
  if (options.json) return 'json';
  if (options.quiet) return 'quiet';
  return process.stderr.isTTY ? 'tty' : 'plain';
}

/** Runs the pipeline (or the stages in `only`) with a progress display; returns the run directory. */
export async function runPipelineCommand(options: PipelineOptions, context: CommandContext, only?: ReadonlySet<string>): Promise<string> {
  // A leaking config, or one the pipeline cannot run, is refused before its run directory is made.
  const fresh = options.resume ? undefined : resolveConfig(options);
  const freshGuarded = fresh ? guardedTaskSource(fresh) : undefined;
  if (fresh && freshGuarded) assertRunnable(fresh, freshGuarded, options.config ?? 'default config');
  const { config, run, resumed } = openRun(options);
  // The run directory's lock is held from here to the end, whatever happens.
  try {
    // Fixed modules and a judge that do not answer are refused now, not at a stage's time limit.
    if (!only || [...only].some((stage) => stage !== 'report')) await assertChatEndpointsAnswer(runEndpoints(config));
    // A resumed run's config (with any --set) is checked again before its next stage.
    const guarded = freshGuarded ?? guardedTaskSource(config);
    if (resumed) assertRunnable(config, guarded, run.paths.config);
    const mode = progressModeOf(options);
    const reporter = createProgressReporter({
      mode,
      stages: stageNamesOf(config).filter((name) => !only || only.has(name)),
      write: mode === 'json' ? context.stdout : context.stderr,
    });
    if (mode !== 'json' && mode !== 'quiet') context.stderr(`${resumed ? 'Resuming' : 'Starting'} ${config.name} in ${run.root}\n`);
    // Trackers see every metrics row from here; a failing one warns once and never stops the run.
    const tracking = trackRunDirectory(run, { tracking: config.tracking, config, tags: { seed: String(config.seed), credit: config.train.credit.kind }, warn: (message) => context.stderr(`warning: ${message}\n`) });
    try {
      await tracking.around(() => runPipeline(config, run, (event) => reporter.handle(event), { ...(only ? { only } : {}), guarded }));
    } finally {
      reporter.close();
    }
  } finally {
    run.close();
  }
  return run.root;
}

export const registerRunCommand: RegisterCommand = (program, context) => {
  program
    .command('run')
    .description('Run the whole pipeline: warm start -> collect -> label -> train-prm -> train (DAPO) -> eval -> report.')
    .option('--config <file>', 'YAML or JSON config (default: the embedded default, configs/default.yaml)')
    .option('--out <dir>', 'run directory (default runs/<date-time>)')
    .option('--resume <dir>', 'continue a killed run from its last checkpoint')
    .option('--credit <kind>', 'step credit of DAPO: process-sum (PRM; also `process`), process-min (PRM, PURE), outcome (Flow-GRPO), mix, or gigpo (step groups, no PRM)')
    .option('--set <key=value>', 'override one config value, parsed as YAML (repeatable): --set train.totalSteps=2', collectOverrides)
    .option('--dry-run', 'validate the config, check models, data and endpoints, print the plan')
    .option('--quiet', 'print warnings and errors only')
    .option('--json', 'print progress as JSON lines on stdout')
    .action(async (options: PipelineOptions & { dryRun?: boolean }) => {
      if (options.dryRun) {
        const config = resolveConfig(options);
        const python = createPythonTool();
        const checks = await dryRunChecks(config, { pythonUnavailable: () => python.unavailableReason() });
        context.stdout(formatDryRun(config, checks, stageNamesOf(config)));
        if (checks.some((check) => !check.ok)) {
          throw new AgentFlowError({ code: 'INVALID_CONFIG', message: 'dry run: some checks failed (see above).' });
        }
        return;
      }
      const root = await runPipelineCommand(options, context);
      context.stdout(`Done. Summary: ${root}/summary.json\nReport:  ${root}/report.html\n`);
    });
};
