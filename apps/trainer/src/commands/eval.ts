import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerEvalCommand: RegisterCommand = (program) => {
  program
    .command('eval')
    .description('Evaluate a planner on a held-out split.')
    .allowUnknownOption()
    .allowExcessArguments()
    .option('--config <file>', 'YAML or JSON config')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('eval', 10);
    });
};
