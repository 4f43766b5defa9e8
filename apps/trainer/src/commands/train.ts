import type { RegisterCommand } from './command-context';
import { collectOverrides } from '@agentflow/core';
import { runPipelineCommand } from './run';

/** One stage of the pipeline in an existing run directory; earlier stages must be done. */
export const registerTrainCommand: RegisterCommand = (program, context) => {
  program
    .command('train')
    .description('Train the planner with DAPO and step-level credit (a stage of `agentflow run`).')
    .requiredOption('--resume <dir>', 'the run directory (created by `agentflow run`)')
    .option('--set <key=value>', 'override one value of the run\'s recorded config, parsed as YAML (repeatable); config.json records the result', collectOverrides)
    .option('--quiet', 'print warnings and errors only')
    .option('--json', 'print progress as JSON lines on stdout')
    .action(async (options: { resume: string; set?: string[]; quiet?: boolean; json?: boolean }) => {
      const root = await runPipelineCommand(options, context, new Set(['train']));
      context.stdout(`Done: ${root}\n`);
    });
};
