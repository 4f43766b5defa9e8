import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { AgentFlowError, describeValue, formatZodIssues } from '@agentflow/core';
import {
  BENCHMARK_EVAL_DEFAULTS,
  type BenchmarkEvalSettings,
  benchmarkEvalSettingsSchema,
  datasetFormatSchema,
} from './benchmark-eval-settings';

type DatasetFormat = BenchmarkEvalSettings['data']['format'];

/** What a caller gives: the planner and the data file; every other key may be left out (or null) for its default. */
export interface BenchmarkEvalSettingsInput {
  /** Names the planner; recorded, compared on resume. */
  planner: string;
  /** Default `full` (LLMs). */
  template?: BenchmarkEvalSettings['template'];
  data: {
    /** The benchmark file; made absolute. */
    path: string;
    /** Default: by extension (.json agentflow-json, .csv aime-csv, .jsonl jsonl). */
    format?: DatasetFormat;
    years?: readonly [number, number] | null;
    limit?: number | null;
    fields?: Readonly<Record<string, string>> | null;
  };
  /** Names the fixed verifier and generator; default null (none). */
  fixedModules?: string | null;
  /** Default true. */
  python?: boolean;
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
 * The full settings of an eval: the defaults filled in (BENCHMARK_EVAL_DEFAULTS), paths made
 * absolute, the data file hashed afresh (so a resume notices an edited file), then checked
 * against the schema (INVALID_ARGUMENT names each wrong key).
 */
export function resolveBenchmarkEvalSettings(input: BenchmarkEvalSettingsInput): BenchmarkEvalSettings {
  const samples = input.samples ?? BENCHMARK_EVAL_DEFAULTS.samples;
  const path = resolve(input.data.path);
  const parsed = benchmarkEvalSettingsSchema.safeParse({
    planner: input.planner,
    template: input.template ?? 'full',
    data: {
      path,
      format: input.data.format ?? datasetFormatOf(path),
      sha256: benchmarkFileSha256(path),
      years: input.data.years ?? null,
      limit: input.data.limit ?? null,
      fields: input.data.fields ?? null,
    },
    fixedModules: input.fixedModules ?? null,
    python: input.python ?? true,
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
