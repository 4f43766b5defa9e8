import { assertNever, type LanguageModel } from '@agentflow/core';
import { z } from 'zod';
import { createOllamaModel } from '../ollama/ollama-model';
import { createOpenAICompatibleModel } from '../openai/openai-compatible-model';

/**
 * How long a call to the endpoint may take; unset keeps the back end's default (`httpSettingsSchema`:
 * 120 s an attempt, 4 retries, 600 s a call). A run's time limit, when shorter, ends a call sooner.
 */
const endpointTimingFields = {
  timeoutMs: z.number().int().positive().optional().describe('One attempt at most, in ms (default 120000: a CPU-hosted 8B model can take a minute).'),
  maxRetries: z.number().int().nonnegative().optional().describe('Retries after the first attempt on 429, 5xx, timeouts and connection errors (default 4).'),
  totalTimeoutMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('The whole call at most, in ms: every attempt, backoff and Retry-After wait (default 600000).'),
};

/** The timing fields an endpoint sets, for the back end's settings. */
const timingOf = (endpoint: { timeoutMs?: number | undefined; maxRetries?: number | undefined; totalTimeoutMs?: number | undefined }) => ({
  ...(endpoint.timeoutMs === undefined ? {} : { timeoutMs: endpoint.timeoutMs }),
  ...(endpoint.maxRetries === undefined ? {} : { maxRetries: endpoint.maxRetries }),
  ...(endpoint.totalTimeoutMs === undefined ? {} : { totalTimeoutMs: endpoint.totalTimeoutMs }),
});

/**
 * A chat endpoint as a config names it: an Ollama server (its native /api/chat) or an
 * OpenAI-compatible API (/chat/completions). Parse it once at the edge, then hand the value to
 * {@link createChatModel} or {@link probeChatEndpoint}.
 */
export const chatEndpointSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('ollama'),
      url: z.string().url().default('http://127.0.0.1:11434').describe("Ollama server; its native /api/chat is used."),
      model: z.string().min(1).describe('Ollama model tag, e.g. qwen2.5:7b-instruct.'),
      ...endpointTimingFields,
    })
    .strict(),
  z
    .object({
      kind: z.literal('openai'),
      baseUrl: z.string().url().describe('OpenAI-compatible base URL, e.g. https://api.deepseek.com/v1.'),
      model: z.string().min(1),
      apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY').describe('Environment variable holding the API key.'),
      responseFormat: z
        .enum(['json_schema', 'json_object', 'none'])
        .default('json_schema')
        .describe("How JSON output is requested: json_schema (OpenAI, vLLM), json_object (DeepSeek's API takes no json_schema), none. The reply is validated against the schema either way."),
      ...endpointTimingFields,
    })
    .strict(),
]);

/** A parsed chat endpoint (defaults filled in). */
export type ChatEndpoint = z.infer<typeof chatEndpointSchema>;

/**
 * The core LanguageModel of an endpoint: Ollama's native /api/chat, or an OpenAI-compatible
 * /chat/completions, with the endpoint's `timeoutMs`, `maxRetries` and `totalTimeoutMs` when set.
 */
export function createChatModel(endpoint: ChatEndpoint): LanguageModel {
  switch (endpoint.kind) {
    case 'ollama':
      return createOllamaModel({ model: endpoint.model, endpoints: [endpoint.url], ...timingOf(endpoint) });
    case 'openai':
      return createOpenAICompatibleModel({
        model: endpoint.model,
        endpoints: [endpoint.baseUrl],
        apiKeyEnv: endpoint.apiKeyEnv,
        responseFormat: endpoint.responseFormat,
        ...timingOf(endpoint),
      });
    default:
      return assertNever(endpoint, 'endpoint kind');
  }
}
