import { z } from 'zod';

/** Defaults of the benchmark eval, shown in `agentflow eval --help` and applied by `resolveEvalSettings`. */
export const EVAL_DEFAULTS = {
  /** As `agentflow solve`: room for a few computations before the answer. */
  maxSteps: 10,
  /** @agentflow/planner's default completion limit per decision. */
  maxTokens: 512,
  /** Greedy with one sample: the eval is then repeatable. */
  temperatureOneSample: 0,
  /** With several samples they must differ: Chen et al. 2021 (Codex) drew pass@100 samples at T = 0.8. */
  temperatureSeveralSamples: 0.8,
  samples: 1,
  seed: 0,
  /** As `agentflow solve`: 5 minutes per run. */
  timeLimitS: 300,
  ollamaUrl: 'http://127.0.0.1:11434',
  openaiBaseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
  /** As `agentflow solve --memory-k`: the solved examples shown per question. */
  memoryK: 3,
  /** Ollama serves OLLAMA_NUM_PARALLEL=4 requests at once by default. */
  concurrency: 4,
} as const;

export const datasetFormatSchema = z
  .enum(['agentflow-json', 'aime-csv', 'jsonl'])
  .describe("The file's format: AgentFlow's benchmark JSON (aime24.json), the AIME CSV, or JSON lines with a field mapping.");

/**
 * What decides an eval's results. Recorded in `eval-config.json` when the eval starts; a
 * resume whose settings differ in any key is refused (the key is named), so the records of
 * one directory always come from one experiment.
 */
export const evalSettingsSchema = z
  .object({
    planner: z.string().min(1).describe('The planner: ollama:MODEL, openai:MODEL or local:DIR (DIR made absolute).'),
    template: z.enum(['full', 'compact']).describe("The planner's prompt: full (LLMs; the default for ollama: and openai:) or compact (tiny local policies; the default for local:)."),
    data: z
      .object({
        path: z.string().min(1).describe('Absolute path of the benchmark file.'),
        format: datasetFormatSchema,
        sha256: z.string().regex(/^[0-9a-f]{64}$/).describe('SHA-256 of the file: a resume over an edited file is refused.'),
        years: z.tuple([z.number().int(), z.number().int()]).nullable().describe('Inclusive year range, e.g. [1983, 2023]; null keeps every item.'),
        limit: z.number().int().positive().nullable().describe('Keep the first N items after the year filter; null keeps all.'),
        fields: z.record(z.string(), z.string()).nullable().describe("The file's field names (id, question, answer, prompt, choices, year) when they differ from the format's."),
      })
      .strict(),
    fixedModules: z
      .string()
      .nullable()
      .describe('The fixed verifier and generator, ollama:MODEL or openai:MODEL; null: the rule verifier, and the planner\'s finish input as the answer.'),
    python: z.boolean().describe('Offer the sandboxed python tool (@agentflow/executor).'),
    samples: z.number().int().positive().describe('Runs per item (K): pass@K and avg@K are reported when K > 1.'),
    maxSteps: z.number().int().positive().describe(`Planner decisions per run at most (default ${EVAL_DEFAULTS.maxSteps}).`),
    maxTokens: z.number().int().positive().describe(`Completion token limit of one planner decision (default ${EVAL_DEFAULTS.maxTokens}).`),
    temperature: z
      .number()
      .nonnegative()
      .describe(
        `Planner sampling temperature (default ${EVAL_DEFAULTS.temperatureOneSample} with one sample; ${EVAL_DEFAULTS.temperatureSeveralSamples} with several, as Chen et al. 2021 sampled for pass@k).`,
      ),
    seed: z.number().int().describe('Seed of the per-run sampling seeds: run (item, k) samples with a seed drawn from (seed, item id, k).'),
    timeLimitS: z.number().int().positive().describe(`Wall-clock limit of one run in seconds (default ${EVAL_DEFAULTS.timeLimitS}).`),
    memory: z
      .object({
        path: z.string().min(1).describe('Absolute path of the SQLite cross-task memory (created when missing; may be shared across evals).'),
        k: z.number().int().positive().describe(`Solved examples shown to the planner per question (default ${EVAL_DEFAULTS.memoryK}).`),
      })
      .strict()
      .nullable()
      // Evals recorded before --memory existed ran without it.
      .default(null)
      .describe('Cross-task memory (--memory): similar solved items shown to the planner, right runs kept; null: none.'),
  })
  .strict();

export type EvalSettings = z.infer<typeof evalSettingsSchema>;

/**
 * Where the models are and how hard to drive them: not part of the experiment, so a resume
 * may change them (a moved Ollama server, a key in another variable).
 */
export const evalConnectionSchema = z
  .object({
    ollamaUrl: z.string().url().describe(`Ollama base URL (default ${EVAL_DEFAULTS.ollamaUrl}).`),
    openaiBaseUrl: z.string().url().describe(`OpenAI-compatible base URL, ending before /chat/completions (default ${EVAL_DEFAULTS.openaiBaseUrl}).`),
    apiKeyEnv: z.string().describe(`Environment variable with the OpenAI-compatible API key; "" sends none (vLLM). Default ${EVAL_DEFAULTS.apiKeyEnv}.`),
    responseFormat: z
      .enum(['json_schema', 'json_object', 'none'])
      .describe("How the OpenAI-compatible server is asked for JSON: json_schema (OpenAI, vLLM; the default), json_object (DeepSeek), none."),
    concurrency: z.number().int().positive().describe(`Runs in flight at once (default ${EVAL_DEFAULTS.concurrency}).`),
  })
  .strict();

export type EvalConnection = z.infer<typeof evalConnectionSchema>;

/** `eval-config.json`: the settings the eval started with, and the connection it last ran with. */
export const evalConfigFileSchema = z
  .object({
    kind: z.literal('agentflow-eval').describe('Marks an eval directory (a run directory has config.json instead).'),
    createdAt: z.string().describe('ISO-8601 time the eval started.'),
    settings: evalSettingsSchema,
    connection: evalConnectionSchema,
  })
  .strict();

export type EvalConfigFile = z.infer<typeof evalConfigFileSchema>;
