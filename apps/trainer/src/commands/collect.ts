import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerCollectCommand: RegisterCommand = (program) => {
  program
    .command('collect')
    .description('Run the untrained agent over the training split and keep every trajectory.')
    .allowUnknownOption()
    .allowExcessArguments()
    .option('--config <file>', 'YAML or JSON config')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('collect', 10);
    });
};
