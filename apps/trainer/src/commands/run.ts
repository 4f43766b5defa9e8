import { loadConfig } from '../config/load-config';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { notImplemented } from './not-implemented';

export const registerRunCommand: RegisterCommand = (program) => {
  program
    .command('run')
    .description('Run the whole pipeline: collect -> label -> train-prm -> train -> eval -> report.')
    .option('--config <file>', 'YAML or JSON config (default: the embedded default)')
    .option('--out <dir>', 'run directory')
    .option('--resume <dir>', 'continue a killed run from its last checkpoint')
    .option('--dry-run', 'validate the config, check models, data and endpoints, print the plan')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('run', 10);
    });
};
