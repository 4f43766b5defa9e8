import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import {
  type BenchmarkEvalSettings,
  parseDatasetFormat,
  parseFieldMapping,
  parseToolsOption,
  parseYearRange,
  resolveBenchmarkData,
  resolveBenchmarkEvalSettings,
} from '@agentflow/eval';
import { parseChatModelSpec, parsePlannerSpec } from '@agentflow/llm';
import type { BenchmarkOptions } from './eval-options';
import { EVAL_DEFAULTS, type EvalConnection, evalConnectionSchema } from './eval-settings';
import { parseChoice, parseInteger, parseNumber, parsePositiveInteger } from '../option-values';

/** An option's value parsed, else the recorded one (undefined: the eval's default). */
function parsedOr<T>(text: string | undefined, parse: (text: string) => T, recorded: T | undefined): T | undefined {
  return text === undefined ? recorded : parse(text);
}

/**
 * `--memory FILE` with `--memory-k`; absent, the recorded memory, if any, with `--memory-k`
 * laid over it. `--memory-k` alone has no memory to size.
 */
function memoryOf(given: BenchmarkOptions, base?: BenchmarkEvalSettings): BenchmarkEvalSettings['memory'] {
  const path = given.memory ?? base?.memory?.path;
  if (path === undefined) {
    if (given.memoryK === undefined) return null;
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--memory-k ${given.memoryK} needs --memory FILE (the SQLite cross-task memory), e.g. --memory evals/memory.sqlite.`,
    });
  }
  const k = parsedOr(given.memoryK, (text) => parsePositiveInteger('--memory-k', text), base?.memory?.k);
  return { path, k: k ?? EVAL_DEFAULTS.memoryK };
}

/**
 * The eval's settings from the options this command line gives, each absent one taken from
 * `base` (the recorded settings, on `--resume DIR`) or else its default (@agentflow/eval's
 * `resolveBenchmarkEvalSettings`, which hashes the data file afresh, so a resume notices an
 * edited file).
 */
export function resolveEvalSettings(given: BenchmarkOptions, base?: BenchmarkEvalSettings): BenchmarkEvalSettings {
  const plannerText = given.planner ?? base?.planner;
  // --data NAME is that benchmark's file in --datasets-dir; a path whose name is a benchmark's is that benchmark.
  const data =
    given.data === undefined
      ? base && { path: base.data.path, benchmark: base.data.benchmark }
      : resolveBenchmarkData(given.data, given.datasetsDir === undefined ? {} : { datasetsDir: given.datasetsDir });
  const dataPath = data?.path;
  if (plannerText === undefined || dataPath === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A benchmark eval needs ${plannerText === undefined ? '--planner ollama:MODEL|openai:MODEL|local:DIR' : '--data FILE'}, e.g. agentflow eval --planner ollama:qwen3:8b --data aime24.json --out evals/aime24.`,
    });
  }
  const fixedModules = given.fixedModules ?? base?.fixedModules ?? null;
  if (fixedModules !== null) parseChatModelSpec('--fixed-modules', fixedModules);
  const judge = given.judge ?? base?.judge ?? null;
  if (judge !== null) parseChatModelSpec('--judge', judge);
  const byPlanner = parsePlannerSpec(plannerText).kind === 'local' ? 'compact' : 'full';
  return resolveBenchmarkEvalSettings({
    planner: plannerText,
    template: parsedOr(given.template, (text) => parseChoice('--template', text, ['full', 'compact']), base?.template) ?? byPlanner,
    data: {
      path: dataPath,
      format: given.format === undefined && given.data === undefined && base ? base.data.format : parseDatasetFormat(given.format, dataPath),
      years: parsedOr(given.years, (text) => parseYearRange(text), base?.data.years),
      limit: parsedOr(given.limit, (text) => parsePositiveInteger('--limit', text), base?.data.limit),
      fields: parsedOr(given.fields, (text) => parseFieldMapping(text), base?.data.fields),
      // A resume keeps the recorded benchmark; a --data given is told by its name (unless --format or --fields say otherwise).
      ...(given.data === undefined && data ? { benchmark: data.benchmark } : {}),
    },
    fixedModules,
    judge,
    python: given.python ?? base?.python,
    tools: parsedOr(given.tools, (text) => parseToolsOption(text), base?.tools),
    samples: parsedOr(given.samples, (text) => parsePositiveInteger('--samples', text), base?.samples),
    maxSteps: parsedOr(given.maxSteps, (text) => parsePositiveInteger('--max-steps', text), base?.maxSteps),
    maxTokens: parsedOr(given.maxTokens, (text) => parsePositiveInteger('--max-tokens', text), base?.maxTokens),
    temperature: parsedOr(given.temperature, (text) => parseNumber('--temperature', text, 0), base?.temperature),
    seed: parsedOr(given.seed, (text) => parseInteger('--seed', text), base?.seed),
    timeLimitS: parsedOr(given.timeLimit, (text) => parsePositiveInteger('--time-limit', text), base?.timeLimitS),
    memory: memoryOf(given, base),
  });
}

/** The connection from the options given, each absent one from `base` (the last run's, as recorded) or its default. */
export function resolveEvalConnection(given: BenchmarkOptions, base?: Readonly<Record<string, unknown>>): EvalConnection {
  const parsed = evalConnectionSchema.safeParse({
    ollamaUrl: given.ollamaUrl ?? base?.ollamaUrl ?? EVAL_DEFAULTS.ollamaUrl,
    openaiBaseUrl: given.openaiBaseUrl ?? base?.openaiBaseUrl ?? EVAL_DEFAULTS.openaiBaseUrl,
    apiKeyEnv: given.apiKeyEnv ?? base?.apiKeyEnv ?? EVAL_DEFAULTS.apiKeyEnv,
    responseFormat:
      given.responseFormat === undefined
        ? (base?.responseFormat ?? 'json_schema')
        : parseChoice('--response-format', given.responseFormat, ['json_schema', 'json_object', 'none']),
    concurrency: parsedOr(given.concurrency, (text) => parsePositiveInteger('--concurrency', text), base?.concurrency) ?? EVAL_DEFAULTS.concurrency,
  });
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid connection options:\n${formatZodIssues(parsed.error).join('\n')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
