import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerDedupCommand: RegisterCommand = (program) => {
  program
    .command('dedup')
    .description('Find test items that leak into the training data.')
    .allowUnknownOption()
    .allowExcessArguments()
    .option('--config <file>', 'YAML or JSON config')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('dedup', 6);
    });
};
