import type { ChatRequest, ChatResponse, LanguageModel } from '@agentflow/core';
import { z } from 'zod';
import { type HttpEnvironment, httpSettingsSchema } from '../transport/http-settings';
import { createJsonTransport } from '../transport/json-transport';
import { replyShapeError } from '../transport/reply-shape-error';
import { parseModelSettings } from '../transport/split-environment';
import { type OllamaOptions, ollamaChatResponseSchema } from './ollama-wire';

export const ollamaModelSettingsSchema = httpSettingsSchema
  .extend({
    model: z.string().min(1).describe('Ollama model tag, e.g. "qwen3:8b".'),
    endpoints: httpSettingsSchema.shape.endpoints.default(['http://127.0.0.1:11434']).describe(
      'Ollama base URLs (default: the local server on its documented port 11434), served in turn.',
    ),
    numCtx: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Context window (options.num_ctx); unset keeps the server default.'),
    keepAlive: z
      .string()
      .optional()
      .describe('How long the server keeps the model loaded after a call (keep_alive, e.g. "10m").'),
    temperature: z.number().nonnegative().optional().describe('Default temperature when a request sets none.'),
    seed: z.number().int().optional().describe('Default seed when a request sets none.'),
  })
  .strict();

/** Settings of {@link createOllamaModel}: data (validated) plus the injected outside world. */
export type OllamaModelSettings = z.input<typeof ollamaModelSettingsSchema> & HttpEnvironment;

/**
 * A model served by Ollama's native `POST /api/chat`, not its `/v1` layer (which ignores
 * `think: false`). Structured output goes through `format` (a JSON schema).
 */
export function createOllamaModel(input: OllamaModelSettings): LanguageModel {
  const { settings, environment } = parseModelSettings(ollamaModelSettingsSchema, { ...input }, 'Ollama model');
  const transport = createJsonTransport(settings, environment);

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const options: OllamaOptions = {};
    const temperature = request.temperature ?? settings.temperature;
    const seed = request.seed ?? settings.seed;
    if (temperature !== undefined) options.temperature = temperature;
    if (seed !== undefined) options.seed = seed;
    if (settings.numCtx !== undefined) options.num_ctx = settings.numCtx;
    if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
    if (request.topP !== undefined) options.top_p = request.topP;
    if (request.stop && request.stop.length > 0) options.stop = request.stop;
    const body = {
      model: settings.model,
      messages: request.messages.map(({ role, content }) => ({ role, content })),
      stream: false,
      think: false,
      ...(request.jsonSchema ? { format: request.jsonSchema } : {}),
      options,
      ...(settings.keepAlive ? { keep_alive: settings.keepAlive } : {}),
    };
    const reply = await transport.post('/api/chat', body, { signal: request.signal });
    const parsed = ollamaChatResponseSchema.safeParse(reply.body);
    if (!parsed.success) {
      throw replyShapeError(reply, {
        expected: 'an Ollama chat reply',
        error: parsed.error,
        advice:
          "Check the endpoint's URL (a config's url, or endpoints): it must be an Ollama server, whose native /api/chat answers " +
          '{model, message, done}; an OpenAI-compatible server takes kind openai.',
      });
    }
    const data = parsed.data;
    return {
      text: data.message.content,
      finishReason: data.done_reason === 'length' ? 'length' : 'stop',
      model: data.model,
      ...(data.prompt_eval_count !== undefined && data.eval_count !== undefined
        ? { usage: { promptTokens: data.prompt_eval_count, completionTokens: data.eval_count } }
        : {}),
    };
  }

  return { specificationVersion: 'v1', provider: 'ollama', modelId: settings.model, chat };
}
