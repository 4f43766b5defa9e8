import { z } from 'zod';

/**
 * What every OpenAI-style reply body carries besides its choices (chat and legacy completions,
 * OpenAI's and vLLM's servers alike): ids, the model that answered and the token usage.
 */
export const openAIEnvelopeSchema = z.object({
  id: z.string().optional(),
  object: z.string().optional(),
  model: z.string(),
  usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }).optional(),
});

/**
 * The body of a `POST /chat/completions` reply as documented in OpenAI's API reference
 * ("The chat completion object"); vLLM and DeepSeek return the same shape.
 */
export const openAIChatResponseSchema = openAIEnvelopeSchema.extend({
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        message: z.object({
          role: z.string(),
          content: z.string().nullable(),
          refusal: z.string().nullable().optional(),
        }),
        finish_reason: z.string().nullable(),
      }),
    )
    .min(1),
});
export type OpenAIChatResponse = z.infer<typeof openAIChatResponseSchema>;
