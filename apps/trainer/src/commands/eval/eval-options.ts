/** The options of `agentflow eval` as commander hands them over: strings, or absent when not given. */
export interface EvalCommandOptions {
  resume?: string;
  out?: string;
  set?: string[];
  quiet?: boolean;
  json?: boolean;
  planner?: string;
  data?: string;
  format?: string;
  years?: string;
  limit?: string;
  fields?: string;
  fixedModules?: string;
  python?: boolean;
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
  format: '--format',
  years: '--years',
  limit: '--limit',
  fields: '--fields',
  fixedModules: '--fixed-modules',
  python: '--no-python',
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

/** The command-line option that sets a key of the recorded settings, for messages (`data.limit` -> `--limit`). */
export function optionOfSettingsKey(key: string): string | undefined {
  const byKey: Record<string, string> = {
    planner: '--planner',
    template: '--template',
    'data.path': '--data',
    'data.format': '--format',
    'data.years': '--years',
    'data.limit': '--limit',
    'data.fields': '--fields',
    fixedModules: '--fixed-modules',
    python: '--no-python',
    samples: '--samples',
    maxSteps: '--max-steps',
    maxTokens: '--max-tokens',
    temperature: '--temperature',
    seed: '--seed',
    timeLimitS: '--time-limit',
    memory: '--memory',
    'memory.path': '--memory',
    'memory.k': '--memory-k',
  };
  return byKey[key] ?? byKey[key.split('.').slice(0, 2).join('.')];
}
