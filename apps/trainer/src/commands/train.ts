import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerTrainCommand: RegisterCommand = (program) => {
  program
    .command('train')
    .description('Train the planner with DAPO and step-level credit.')
    .allowUnknownOption()
    .allowExcessArguments()
    .option('--config <file>', 'YAML or JSON config')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('train', 8);
    });
};
