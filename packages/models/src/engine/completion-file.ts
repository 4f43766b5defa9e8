import { AgentFlowError, type PolicyBatch, readConfigFile } from '@agentflow/core';
import { z } from 'zod';

const idRows = z.array(z.array(z.number().int().nonnegative()));

/** A file of token-id completions to score (`agentflow model logprobs | grad --input FILE`): `{"prompt_ids": [[...]], "completion_ids": [[...]]}`. */
export const completionFileSchema = z.object({
  prompt_ids: idRows.describe('Prompt token ids, one row per example.'),
  completion_ids: idRows.describe('Completion token ids, aligned with prompt_ids.'),
});

/**
 * Reads and checks a {@link completionFileSchema} file as a batch for {@link scoreCompletions}
 * (read as bounded JSON: core's readConfigFile). INVALID_ARGUMENT names `option` (where the path
 * came from) and what is wrong.
 */
export function readCompletionFile(path: string, option = '--input'): PolicyBatch {
  let raw: unknown;
  try {
    raw = readConfigFile(path);
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${path} is not a readable JSON file (${(cause as Error).message}).`,
      cause,
      details: { path },
    });
  }
  const parsed = completionFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${path}: expected {"prompt_ids": [[int...]], "completion_ids": [[int...]]}: ${parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
      details: { path },
    });
  }
  const { prompt_ids: promptIds, completion_ids: completionIds } = parsed.data;
  if (promptIds.length !== completionIds.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${path}: prompt_ids has ${promptIds.length} rows but completion_ids has ${completionIds.length}.`,
      details: { path },
    });
  }
  return { promptIds, completionIds };
}
