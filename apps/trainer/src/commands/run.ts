import { AgentFlowError } from '@agentflow/core';
import { createPythonTool } from '@agentflow/executor';
import { dryRunChecks, formatDryRun } from '../pipeline/dry-run';
import { openRun, resolveConfig } from '../pipeline/open-run';
import { createProgressReporter, type ProgressMode } from '../progress/progress-reporter';
import { runWorldPipeline, WORLD_STAGE_NAMES } from '../world/world-pipeline';
import type { CommandContext, RegisterCommand } from './command-context';

export interface PipelineOptions {
  config?: string;
  out?: string;
  resume?: string;
  credit?: string;
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
  const { config, run, resumed } = openRun(options);
  if (config.task.kind !== 'world') {
    throw new AgentFlowError({
      code: 'NOT_IMPLEMENTED',
      message:
        'This build runs the embedded task world end to end; dataset runs (the reference AIME setup) are checked by --dry-run but their stages are not wired yet.',
    });
  }
  const mode = progressModeOf(options);
  const reporter = createProgressReporter({
    mode,
    stages: WORLD_STAGE_NAMES.filter((name) => !only || only.has(name)),
    write: mode === 'json' ? context.stdout : context.stderr,
  });
  if (mode !== 'json' && mode !== 'quiet') context.stderr(`${resumed ? 'Resuming' : 'Starting'} ${config.name} in ${run.root}\n`);
  try {
    await runWorldPipeline(config, run, (event) => reporter.handle(event), only);
  } finally {
    reporter.close();
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
    .option('--credit <kind>', 'step credit of DAPO: process (PRM), outcome (Flow-GRPO) or mix')
    .option('--dry-run', 'validate the config, check models, data and endpoints, print the plan')
    .option('--quiet', 'print warnings and errors only')
    .option('--json', 'print progress as JSON lines on stdout')
    .action(async (options: PipelineOptions & { dryRun?: boolean }) => {
      if (options.dryRun) {
        const config = resolveConfig(options);
        const python = createPythonTool();
        const checks = await dryRunChecks(config, { pythonUnavailable: () => python.unavailableReason() });
        context.stdout(formatDryRun(config, checks, WORLD_STAGE_NAMES));
        if (checks.some((check) => !check.ok)) {
          throw new AgentFlowError({ code: 'INVALID_CONFIG', message: 'dry run: some checks failed (see above).' });
        }
        return;
      }
      const root = await runPipelineCommand(options, context);
      context.stdout(`Done. Summary: ${root}/summary.json\nReport:  ${root}/report.html\n`);
    });
};
