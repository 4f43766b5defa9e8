import { z } from 'zod';
import { openAIEnvelopeSchema } from '../openai/openai-wire';

/**
 * The body of a `POST /v1/completions` reply of vLLM's OpenAI-compatible server (OpenAI's
 * legacy "completion object" plus vLLM's extras). With `logprobs` set, `choices[i].logprobs`
 * holds the sampled tokens and their log-probs; with `return_tokens_as_token_ids` each token
 * is the string `token_id:<id>`; with `return_token_ids` (vLLM >= 0.10.2) the choice also
 * carries `prompt_token_ids` and `token_ids`.
 */
export const vllmCompletionResponseSchema = openAIEnvelopeSchema.extend({
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        text: z.string(),
        logprobs: z
          .object({
            tokens: z.array(z.string()),
            token_logprobs: z.array(z.number().nullable()),
            text_offset: z.array(z.number()).optional(),
            top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullable().optional(),
          })
          .nullable()
          .optional(),
        finish_reason: z.string().nullable(),
        prompt_token_ids: z.array(z.number().int()).nullable().optional(),
        token_ids: z.array(z.number().int()).nullable().optional(),
      }),
    )
    .min(1),
});
export type VllmCompletionResponse = z.infer<typeof vllmCompletionResponseSchema>;

/** `GET /v1/models`: the served base model and every LoRA adapter loaded on top of it (`parent` = the base). */
export const vllmModelListSchema = z.object({
  object: z.string().optional(),
  data: z.array(
    z.object({
      id: z.string(),
      object: z.string().optional(),
      root: z.string().nullable().optional(),
      parent: z.string().nullable().optional(),
    }),
  ),
});
export type VllmModelList = z.infer<typeof vllmModelListSchema>;

/** The prefix vLLM writes before each token id when `return_tokens_as_token_ids` is true. */
export const TOKEN_ID_PREFIX = 'token_id:';

/** The id in a `token_id:<id>` token string, or undefined when the string is not one. */
export function parseTokenIdString(token: string): number | undefined {
  if (!token.startsWith(TOKEN_ID_PREFIX)) return undefined;
  const digits = token.slice(TOKEN_ID_PREFIX.length);
  return /^\d+$/.test(digits) ? Number(digits) : undefined;
}

/** The message of a vLLM error body: `{message}` (older servers) or `{error: {message}}`, else the text itself. */
export function vllmErrorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON: vLLM answers a successful adapter load in plain text, and so may a proxy in front of it.
  }
  return text.trim().slice(0, 300);
}
