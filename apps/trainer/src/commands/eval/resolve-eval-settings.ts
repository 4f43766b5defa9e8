import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import type { z } from 'zod';
import { parsePlannerSpec, parsePositiveInteger } from '../solve/planner-spec';
import { parseEndpointSpec } from '../solve/cli-models';
import type { BenchmarkOptions } from './eval-options';
import { EVAL_DEFAULTS, type EvalConnection, type EvalSettings, evalConnectionSchema, evalSettingsSchema } from './eval-settings';
import { parseChoice, parseFields, parseFormat, parseInteger, parseNumber, parseYears } from './parse-option-values';

function validated<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid ${what}:\n${formatZodIssues(parsed.error).join('\n')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function sha256Of(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (cause) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `--data ${path}: cannot read the benchmark file (${(cause as Error).message}).`,
      cause,
      details: { path },
    });
  }
}

/** `local:DIR` with DIR absolute, so a resume from another folder names the same planner. */
function normalizePlanner(text: string): string {
  const spec = parsePlannerSpec(text);
  return spec.kind === 'local' ? `local:${resolve(spec.dir)}` : text;
}

/**
 * `--memory FILE` (absolute) with `--memory-k`; absent, the recorded memory, if any, with
 * `--memory-k` laid over it. `--memory-k` alone has no memory to size.
 */
function memoryOf(given: BenchmarkOptions, base?: EvalSettings): EvalSettings['memory'] {
  const path = given.memory === undefined ? base?.memory?.path : resolve(given.memory);
  if (path === undefined) {
    if (given.memoryK === undefined) return null;
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--memory-k ${given.memoryK} needs --memory FILE (the SQLite cross-task memory), e.g. --memory evals/memory.sqlite.`,
    });
  }
  const k = given.memoryK === undefined ? (base?.memory?.k ?? EVAL_DEFAULTS.memoryK) : parsePositiveInteger('--memory-k', given.memoryK);
  return { path, k };
}

/**
 * The eval's settings from the options this command line gives, each absent one taken from
 * `base` (the recorded settings, on `--resume DIR`) or else its default. The data file's hash
 * is always computed afresh, so a resume notices an edited file.
 */
export function resolveEvalSettings(given: BenchmarkOptions, base?: EvalSettings): EvalSettings {
  const plannerText = given.planner ?? base?.planner;
  const dataPath = given.data === undefined ? base?.data.path : resolve(given.data);
  if (plannerText === undefined || dataPath === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A benchmark eval needs ${plannerText === undefined ? '--planner ollama:MODEL|openai:MODEL|local:DIR' : '--data FILE'}, e.g. agentflow eval --planner ollama:qwen3:8b --data aime24.json --out evals/aime24.`,
    });
  }
  const planner = normalizePlanner(plannerText);
  const samples = given.samples === undefined ? (base?.samples ?? EVAL_DEFAULTS.samples) : parsePositiveInteger('--samples', given.samples);
  const byPlanner = parsePlannerSpec(planner).kind === 'local' ? 'compact' : 'full';
  const byDefault = samples > 1 ? EVAL_DEFAULTS.temperatureSeveralSamples : EVAL_DEFAULTS.temperatureOneSample;
  const fixedModules = given.fixedModules ?? base?.fixedModules ?? null;
  if (fixedModules !== null) parseEndpointSpec('--fixed-modules', fixedModules);
  return validated(
    evalSettingsSchema,
    {
      planner,
      template: given.template === undefined ? (base?.template ?? byPlanner) : parseChoice('--template', given.template, ['full', 'compact']),
      data: {
        path: dataPath,
        format: given.format === undefined && given.data === undefined && base ? base.data.format : parseFormat(given.format, dataPath),
        sha256: sha256Of(dataPath),
        years: given.years === undefined ? (base?.data.years ?? null) : parseYears(given.years),
        limit: given.limit === undefined ? (base?.data.limit ?? null) : parsePositiveInteger('--limit', given.limit),
        fields: given.fields === undefined ? (base?.data.fields ?? null) : parseFields(given.fields),
      },
      fixedModules,
      python: given.python ?? base?.python ?? true,
      samples,
      maxSteps: given.maxSteps === undefined ? (base?.maxSteps ?? EVAL_DEFAULTS.maxSteps) : parsePositiveInteger('--max-steps', given.maxSteps),
      maxTokens: given.maxTokens === undefined ? (base?.maxTokens ?? EVAL_DEFAULTS.maxTokens) : parsePositiveInteger('--max-tokens', given.maxTokens),
      temperature: given.temperature === undefined ? (base?.temperature ?? byDefault) : parseNumber('--temperature', given.temperature, 0),
      seed: given.seed === undefined ? (base?.seed ?? EVAL_DEFAULTS.seed) : parseInteger('--seed', given.seed),
      timeLimitS: given.timeLimit === undefined ? (base?.timeLimitS ?? EVAL_DEFAULTS.timeLimitS) : parsePositiveInteger('--time-limit', given.timeLimit),
      memory: memoryOf(given, base),
    },
    'eval settings',
  );
}

/** The connection from the options given, each absent one from `base` (the last run's) or its default. */
export function resolveEvalConnection(given: BenchmarkOptions, base?: EvalConnection): EvalConnection {
  return validated(
    evalConnectionSchema,
    {
      ollamaUrl: given.ollamaUrl ?? base?.ollamaUrl ?? EVAL_DEFAULTS.ollamaUrl,
      openaiBaseUrl: given.openaiBaseUrl ?? base?.openaiBaseUrl ?? EVAL_DEFAULTS.openaiBaseUrl,
      apiKeyEnv: given.apiKeyEnv ?? base?.apiKeyEnv ?? EVAL_DEFAULTS.apiKeyEnv,
      responseFormat:
        given.responseFormat === undefined
          ? (base?.responseFormat ?? 'json_schema')
          : parseChoice('--response-format', given.responseFormat, ['json_schema', 'json_object', 'none']),
      concurrency:
        given.concurrency === undefined ? (base?.concurrency ?? EVAL_DEFAULTS.concurrency) : parsePositiveInteger('--concurrency', given.concurrency),
    },
    'connection options',
  );
}
