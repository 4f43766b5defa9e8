import { z } from 'zod';

/**
 * The body of a non-streaming `POST /api/chat` reply, as documented in Ollama's API
 * reference (docs/api.md, "Chat request (No streaming)"). Only what we read is checked.
 */
export const ollamaChatResponseSchema = z.object({
  model: z.string(),
  created_at: z.string().optional(),
  message: z.object({ role: z.string(), content: z.string() }),
  done: z.boolean(),
  done_reason: z.string().optional(),
  prompt_eval_count: z.number().int().optional(),
  eval_count: z.number().int().optional(),
});
export type OllamaChatResponse = z.infer<typeof ollamaChatResponseSchema>;

/** The `options` object of an Ollama request (model file parameters). */
export interface OllamaOptions {
  temperature?: number;
  seed?: number;
  num_ctx?: number;
  num_predict?: number;
  top_p?: number;
  stop?: string[];
}
