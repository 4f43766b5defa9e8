import { loadConfig } from '@agentflow/core';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { parseOptions } from './label/parse-options';
import { runTrainPrm } from './train-prm/run-train-prm';
import { trainPrmOptionsSchema } from './train-prm/train-prm-options';

export const registerTrainPrmCommand: RegisterCommand = (program, io) => {
  program
    .command('train-prm')
    .description('Train the process reward model (Qwen3 backbone + regression head) on labelled steps.')
    .option('--config <file>', 'YAML or JSON config')
    .requiredOption('--data <file>', 'labelled examples JSONL')
    .requiredOption('--out <dir>', 'checkpoint folder')
    .option('--preset <name>', 'random backbone shape: tiny | qwen3-0.6b-shape')
    .option('--backbone <dir>', 'Hugging Face Qwen3 folder for the backbone')
    .option('--seed <n>', 'seed of backbone, split and batches')
    .option('--loss <kind>', 'mse | bce')
    .option('--epochs <n>', 'maximum epochs')
    .option('--batch-size <n>', 'examples per step')
    .option('--learning-rate <x>', 'head learning rate')
    .option('--lora-learning-rate <x>', 'LoRA learning rate')
    .option('--validation-fraction <x>', 'share of trajectories held out')
    .option('--patience <n>', 'epochs without improvement before stopping')
    .option('--lora-rank <n>', 'LoRA rank on the backbone (0: head only)')
    .option('--lora-alpha <x>', 'LoRA alpha (default 2 x rank)')
    .option('--head-hidden <n>', 'units of a ReLU layer in the head (0: linear)')
    .option('--max-tokens <n>', 'longest input in tokens')
    .option('--device <device>', 'auto | cuda | cpu')
    .action(async (raw: Record<string, unknown> & { config?: string }) => {
      const { config, ...rest } = raw;
      const run = config ? loadConfig(config, runConfigSchema) : undefined;
      const defined = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
      await runTrainPrm(
        parseOptions('train-prm', trainPrmOptionsSchema, {
          ...(run ? { seed: run.seed, device: run.device } : {}),
          ...defined,
        }),
        io,
      );
    });
};
