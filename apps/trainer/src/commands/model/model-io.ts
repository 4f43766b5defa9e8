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
