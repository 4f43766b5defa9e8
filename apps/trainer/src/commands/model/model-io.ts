import { readFileSync } from 'node:fs';
import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import { z } from 'zod';

const idRows = z.array(z.array(z.number().int().nonnegative()));

/** The input FILE of `model logprobs` and `model grad`. */
export const completionFileSchema = z.object({
  prompt_ids: idRows.describe('Prompt token ids, one row per example.'),
  completion_ids: idRows.describe('Completion token ids, aligned with prompt_ids.'),
});

/** Reads and validates `{"prompt_ids": [[...]], "completion_ids": [[...]]}`. */
export function readCompletionFile(path: string): PolicyBatch {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--input ${path} is not a readable JSON file.`,
      cause,
      details: { path },
    });
  }
  const parsed = completionFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--input ${path}: expected {"prompt_ids": [[int...]], "completion_ids": [[int...]]}: ${parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
      details: { path },
    });
  }
  const { prompt_ids: promptIds, completion_ids: completionIds } = parsed.data;
  if (promptIds.length !== completionIds.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--input ${path}: prompt_ids has ${promptIds.length} rows but completion_ids has ${completionIds.length}.`,
      details: { path },
    });
  }
  return { promptIds, completionIds };
}

/** Parses an integer option with a clear error. */
export function parseIntegerOption(name: string, text: string, minimum = 0): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${name} must be an integer >= ${minimum}, got ${JSON.stringify(text)}.`,
      details: { [name]: text },
    });
  }
  return value;
}

/** Parses a number option with a clear error. */
export function parseNumberOption(name: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${name} must be a number, got ${JSON.stringify(text)}.` });
  }
  return value;
}

/** `--device` values. */
export function parseDevice(text: string): 'auto' | 'cuda' | 'cpu' {
  if (text === 'auto' || text === 'cuda' || text === 'cpu') return text;
  throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--device must be auto, cuda or cpu, got ${JSON.stringify(text)}.` });
}

/** `--dtype` values: the element types model folders are saved in. */
export function parseWeightDtype(text: string): 'float32' | 'bfloat16' | 'float16' {
  if (text === 'float32' || text === 'bfloat16' || text === 'float16') return text;
  throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--dtype must be float32, bfloat16 or float16, got ${JSON.stringify(text)}.` });
}
