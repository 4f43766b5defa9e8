import { toolsConfigSchema } from '@agentflow/executor';
import { z } from 'zod';
import { AGENTFLOW_BENCHMARK_NAMES } from '../datasets/agentflow-benchmarks';

/** Defaults of a benchmark eval, applied by `resolveBenchmarkEvalSettings` (and shown in `agentflow eval --help`). */
export const BENCHMARK_EVAL_DEFAULTS = {
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
export const benchmarkEvalSettingsSchema = z
  .object({
    planner: z
      .string()
      .min(1)
      .describe("Names the planner (`runBenchmarkEval`'s `openModels` opens it); `agentflow eval` writes ollama:MODEL, openai:MODEL or local:DIR (DIR absolute)."),
    template: z.enum(['full', 'compact']).describe("The planner's prompt: full (LLMs; the default) or compact (tiny local policies)."),
    data: z
      .object({
        path: z.string().min(1).describe('Absolute path of the benchmark file.'),
        format: datasetFormatSchema,
        sha256: z.string().regex(/^[0-9a-f]{64}$/).describe('SHA-256 of the file: a resume over an edited file is refused.'),
        years: z.tuple([z.number().int(), z.number().int()]).nullable().describe('Inclusive year range, e.g. [1983, 2023]; null keeps every item.'),
        limit: z.number().int().positive().nullable().describe('Keep the first N items after the year filter; null keeps all.'),
        fields: z.record(z.string(), z.string()).nullable().describe("The file's field names (id, question, answer, prompt, choices, year) when they differ from the format's."),
        benchmark: z
          .enum(AGENTFLOW_BENCHMARK_NAMES)
          .nullable()
          // Evals recorded before the benchmarks were known read every file by its items.
          .default(null)
          .describe(
            "Which of AgentFlow's ten benchmarks the file is: its fields, rule checker and judge mode (AGENTFLOW_BENCHMARKS); null: another file, checked by its items (answerFormatFor).",
          ),
      })
      .strict(),
    fixedModules: z
      .string()
      .nullable()
      .describe("Names the fixed verifier and generator (`agentflow eval`: ollama:MODEL or openai:MODEL); null: the rule verifier, and the planner's finish input as the answer."),
    judge: z
      .string()
      .min(1)
      .nullable()
      // Evals recorded before the judge existed ran without one.
      .default(null)
      .describe(
        "Names the LLM judge that scores every run beside the rule checker, as AgentFlow's paper scored (`runBenchmarkEval`'s `openModels` opens it; `agentflow eval --judge`: ollama:MODEL or openai:MODEL); null: the rule checker alone.",
      ),
    python: z.boolean().describe('Offer the sandboxed python tool (@agentflow/executor).'),
    // Evals recorded before the block existed ran with python alone (its default: no other tool).
    tools: toolsConfigSchema.describe(
      "Tools beside python, as a run config's `tools` block (@agentflow/executor's toolsConfigSchema): web_search (Tavily), wikipedia, MCP servers. The paper's search QA sets, GAIA, GPQA and MedQA ran with web and Wikipedia search; default none.",
    ),
    samples: z.number().int().positive().describe('Runs per item (K): pass@K and avg@K are reported when K > 1.'),
    maxSteps: z.number().int().positive().describe(`Planner decisions per run at most (default ${BENCHMARK_EVAL_DEFAULTS.maxSteps}).`),
    maxTokens: z.number().int().positive().describe(`Completion token limit of one planner decision (default ${BENCHMARK_EVAL_DEFAULTS.maxTokens}).`),
    temperature: z
      .number()
      .nonnegative()
      .describe(
        `Planner sampling temperature (default ${BENCHMARK_EVAL_DEFAULTS.temperatureOneSample} with one sample; ${BENCHMARK_EVAL_DEFAULTS.temperatureSeveralSamples} with several, as Chen et al. 2021 sampled for pass@k).`,
      ),
    seed: z.number().int().describe('Seed of the per-run sampling seeds: run (item, k) samples with a seed drawn from (seed, item id, k).'),
    timeLimitS: z.number().int().positive().describe(`Wall-clock limit of one run in seconds (default ${BENCHMARK_EVAL_DEFAULTS.timeLimitS}).`),
    memory: z
      .object({
        path: z.string().min(1).describe('Absolute path of the SQLite cross-task memory (created when missing; may be shared across evals).'),
        k: z.number().int().positive().describe(`Solved examples shown to the planner per question (default ${BENCHMARK_EVAL_DEFAULTS.memoryK}).`),
      })
      .strict()
      .nullable()
      // Evals recorded before the memory existed ran without it.
      .default(null)
      .describe('Cross-task memory: similar solved items shown to the planner, right runs kept; null: none.'),
  })
  .strict();

export type BenchmarkEvalSettings = z.infer<typeof benchmarkEvalSettingsSchema>;

/** `eval-config.json`: the settings the eval started with, and the connection it last ran with. */
export const evalConfigFileSchema = z
  .object({
    kind: z.literal('agentflow-eval').describe('Marks an eval directory (a training run directory has config.json instead).'),
    createdAt: z.string().describe('ISO-8601 time the eval started.'),
    settings: benchmarkEvalSettingsSchema,
    connection: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("The caller's record of how the models were reached (agentflow eval: URLs, key variable, concurrency): rewritten on every start, never compared."),
  })
  .strict();

export type EvalConfigFile = z.infer<typeof evalConfigFileSchema>;
