import { loadConfig } from '@agentflow/core';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { labelOptionsSchema } from './label/label-options';
import { parseOptions } from './label/parse-options';
import { runLabel } from './label/run-label';

export const registerLabelCommand: RegisterCommand = (program, io) => {
  program
    .command('label')
    .description('Score each planner step in [0, 1] (LLM judge), or keep the steps where judge and Monte-Carlo agree.')
    .option('--config <file>', 'YAML or JSON config')
    .option('--labeller <kind>', 'judge | consensus', 'judge')
    .option('--trajectories <file>', 'trajectories JSONL to label (judge)')
    .requiredOption('--out <file>', 'labelled examples JSONL to write')
    .option('--judge-model <id>', 'judge model id', 'deepseek-chat')
    .option('--endpoint <url>', 'OpenAI-compatible base URL', 'https://api.deepseek.com')
    .option('--api-key-env <name>', "environment variable with the API key ('' for none)", 'DEEPSEEK_API_KEY')
    .option('--response-format <kind>', 'json_schema | json_object | none', 'json_object')
    .option('--concurrency <n>', 'judge calls in flight', '8')
    .option('--cache <file>', 'judge cache JSONL (default <out>.judge-cache.jsonl)')
    .option('--input-price <usd>', 'USD per million prompt tokens')
    .option('--output-price <usd>', 'USD per million completion tokens')
    .option('--judged <file>', 'judge-labelled examples (consensus)')
    .option('--monte-carlo <file>', 'Monte-Carlo-labelled examples (consensus)')
    .option('--judge-threshold <x>', 'consensus: judge score at or above which a step is right', '0.5')
    .action(async (raw: Record<string, unknown> & { config?: string }) => {
      if (raw.config) loadConfig(raw.config, runConfigSchema);
      const { config: _config, ...rest } = raw;
      await runLabel(parseOptions('label', labelOptionsSchema, rest), io);
    });
};
