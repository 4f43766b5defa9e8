import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { AgentFlowError, describeValue, formatZodIssues } from '@agentflow/core';
import { type AgentFlowBenchmarkName, resolveBenchmarkData } from '../datasets/agentflow-benchmarks';
import {
  BENCHMARK_EVAL_DEFAULTS,
  type BenchmarkEvalSettings,
  benchmarkEvalSettingsSchema,
  datasetFormatSchema,
} from './benchmark-eval-settings';

type DatasetFormat = BenchmarkEvalSettings['data']['format'];

/** What a caller gives: the planner and the data file; every other key may be left out (or null) for its default. */
export interface BenchmarkEvalSettingsInput {
  /** Names the planner; recorded (`local:DIR` with DIR made absolute, so a resume from another folder names the same planner), compared on resume. */
  planner: string;
  /** Default `full` (LLMs). */
  template?: BenchmarkEvalSettings['template'];
  data: {
    /** The benchmark file, made absolute, or one of the ten names (`bamboogle`), found in `datasetsDir` (`resolveBenchmarkData`). */
    path: string;
    /** Default: by extension (.json agentflow-json, .csv aime-csv, .jsonl jsonl). */
    format?: DatasetFormat;
    years?: readonly [number, number] | null;
    limit?: number | null;
    fields?: Readonly<Record<string, string>> | null;
    /**
     * Which of the ten benchmarks the file is; default: the one its name says (`bamboogle.json`,
     * `bamboogle/data/data.json`, or the name itself) when neither `fields` nor another format is
     * given; null: none.
     */
    benchmark?: AgentFlowBenchmarkName | null;
  };
  /** The folder a benchmark name is looked up in; default `$AGENTFLOW_DATASETS`, else `./datasets`. */
  datasetsDir?: string;
  /** Names the fixed verifier and generator; default null (none). */
  fixedModules?: string | null;
  /** Names the LLM judge scoring every run beside the rule checker; default null (none). */
  judge?: string | null;
  /** Default true. */
  python?: boolean;
  /**
   * Tools beside python, as a run config's `tools` block (`{ webSearch: { apiKeyEnv }, wikipedia:
   * { baseUrl }, mcp: [...] }`, validated by @agentflow/executor's toolsConfigSchema); default none.
   */
  tools?: unknown;
  samples?: number;
  maxSteps?: number;
  maxTokens?: number;
  /** Default 0 with one sample, 0.8 with several (BENCHMARK_EVAL_DEFAULTS). */
  temperature?: number;
  seed?: number;
  timeLimitS?: number;
  /** The SQLite cross-task memory (path made absolute; k default 3); default null (none). */
  memory?: { path: string; k?: number } | null;
}

/** The SHA-256 of a benchmark file, hex: what `data.sha256` records. */
export function benchmarkFileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (cause) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${path}: cannot read the benchmark file (${(cause as Error).message}).`,
      cause,
      details: { path },
    });
  }
}

/** The format a benchmark file's extension implies (.json, .csv, .jsonl). */
export function datasetFormatOf(path: string): DatasetFormat {
  const byExtension: Record<string, DatasetFormat> = { '.json': 'agentflow-json', '.csv': 'aime-csv', '.jsonl': 'jsonl' };
  const format = byExtension[extname(path).toLowerCase()];
  if (!format) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${path}: cannot tell the format from the extension ${describeValue(extname(path))}; give the format (${datasetFormatSchema.options.join(', ')}): data.format, or --format on the command line.`,
      details: { path },
    });
  }
  return format;
}

/**
 * The full settings of an eval: the defaults filled in (BENCHMARK_EVAL_DEFAULTS), a benchmark
 * name looked up in the datasets folder and paths made absolute, the benchmark told by the
 * file's name, the data file hashed afresh (so a resume notices an edited file), then checked
 * against the schema (INVALID_ARGUMENT names each wrong key; a benchmark with a field mapping
 * or another format is refused).
 */
export function resolveBenchmarkEvalSettings(input: BenchmarkEvalSettingsInput): BenchmarkEvalSettings {
  const samples = input.samples ?? BENCHMARK_EVAL_DEFAULTS.samples;
  const named = resolveBenchmarkData(input.data.path, input.datasetsDir === undefined ? {} : { datasetsDir: input.datasetsDir });
  const path = named.path;
  const format = input.data.format ?? datasetFormatOf(path);
  const fields = input.data.fields ?? null;
  const benchmark = input.data.benchmark !== undefined ? input.data.benchmark : fields === null && format === 'agentflow-json' ? named.benchmark : null;
  if (benchmark !== null && (fields !== null || format !== 'agentflow-json')) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${path}: the benchmark ${benchmark} is read with its own fields as agentflow-json; ${fields !== null ? 'leave the field mapping (--fields) out' : `format ${format} does not fit`}, or read the file as no benchmark.`,
      details: { path, benchmark },
    });
  }
  const parsed = benchmarkEvalSettingsSchema.safeParse({
    planner: input.planner.startsWith('local:') ? `local:${resolve(input.planner.slice('local:'.length))}` : input.planner,
    template: input.template ?? 'full',
    data: {
      path,
      format,
      sha256: benchmarkFileSha256(path),
      years: input.data.years ?? null,
      limit: input.data.limit ?? null,
      fields,
      benchmark,
    },
    fixedModules: input.fixedModules ?? null,
    judge: input.judge ?? null,
    python: input.python ?? true,
    tools: input.tools ?? {},
    samples,
    maxSteps: input.maxSteps ?? BENCHMARK_EVAL_DEFAULTS.maxSteps,
    maxTokens: input.maxTokens ?? BENCHMARK_EVAL_DEFAULTS.maxTokens,
    temperature:
      input.temperature ?? (samples > 1 ? BENCHMARK_EVAL_DEFAULTS.temperatureSeveralSamples : BENCHMARK_EVAL_DEFAULTS.temperatureOneSample),
    seed: input.seed ?? BENCHMARK_EVAL_DEFAULTS.seed,
    timeLimitS: input.timeLimitS ?? BENCHMARK_EVAL_DEFAULTS.timeLimitS,
    memory: input.memory ? { path: resolve(input.memory.path), k: input.memory.k ?? BENCHMARK_EVAL_DEFAULTS.memoryK } : null,
  });
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid eval settings:\n${formatZodIssues(parsed.error).join('\n')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
