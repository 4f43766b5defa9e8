/** The options of `agentflow eval` as commander hands them over: strings, or absent when not given. */
export interface EvalCommandOptions {
  resume?: string;
  out?: string;
  set?: string[];
  quiet?: boolean;
  json?: boolean;
  planner?: string;
  data?: string;
  datasetsDir?: string;
  format?: string;
  years?: string;
  limit?: string;
  fields?: string;
  fixedModules?: string;
  judge?: string;
  python?: boolean;
  tools?: string;
  samples?: string;
  maxSteps?: string;
  maxTokens?: string;
  temperature?: string;
  seed?: string;
  timeLimit?: string;
  template?: string;
  memory?: string;
  memoryK?: string;
  ollamaUrl?: string;
  openaiBaseUrl?: string;
  apiKeyEnv?: string;
  responseFormat?: string;
  concurrency?: string;
}

/** The options of the benchmark mode, with their command-line spelling (the stage mode refuses them). */
export const BENCHMARK_OPTIONS = {
  planner: '--planner',
  data: '--data',
  datasetsDir: '--datasets-dir',
  format: '--format',
  years: '--years',
  limit: '--limit',
  fields: '--fields',
  fixedModules: '--fixed-modules',
  judge: '--judge',
  python: '--no-python',
  tools: '--tools',
  samples: '--samples',
  maxSteps: '--max-steps',
  maxTokens: '--max-tokens',
  temperature: '--temperature',
  seed: '--seed',
  timeLimit: '--time-limit',
  template: '--template',
  memory: '--memory',
  memoryK: '--memory-k',
  ollamaUrl: '--ollama-url',
  openaiBaseUrl: '--openai-base-url',
  apiKeyEnv: '--api-key-env',
  responseFormat: '--response-format',
  concurrency: '--concurrency',
  out: '--out',
} as const satisfies Partial<Record<keyof EvalCommandOptions, string>>;

/** The options of the benchmark mode that this command line gives (absent ones are undefined). */
export type BenchmarkOptions = Pick<EvalCommandOptions, Exclude<keyof typeof BENCHMARK_OPTIONS, 'out'>>;

/** Keys of the recorded settings that differ from their option's key (the others are the same). */
const SETTINGS_KEYS: Partial<Record<keyof typeof BENCHMARK_OPTIONS, string>> = {
  data: 'data.path',
  format: 'data.format',
  years: 'data.years',
  limit: 'data.limit',
  fields: 'data.fields',
  timeLimit: 'timeLimitS',
  memoryK: 'memory.k',
};

/** Settings key -> option, from BENCHMARK_OPTIONS; `memory` and `memory.path` are both --memory. */
const OPTION_OF_SETTINGS_KEY: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(BENCHMARK_OPTIONS).map(([key, option]) => [SETTINGS_KEYS[key as keyof typeof BENCHMARK_OPTIONS] ?? key, option]),
  ),
  'memory.path': BENCHMARK_OPTIONS.memory,
};

/** The command-line option that sets a key of the recorded settings, for messages (`data.limit` -> `--limit`). */
export function optionOfSettingsKey(key: string): string | undefined {
  return OPTION_OF_SETTINGS_KEY[key] ?? OPTION_OF_SETTINGS_KEY[key.split('.').slice(0, 2).join('.')];
}
