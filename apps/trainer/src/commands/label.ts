import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerLabelCommand: RegisterCommand = (program) => {
  program
    .command('label')
    .description('Score each planner step in [0, 1] (LLM judge or Monte-Carlo).')
    .allowUnknownOption()
    .allowExcessArguments()
    .option('--config <file>', 'YAML or JSON config')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('label', 7);
    });
};
