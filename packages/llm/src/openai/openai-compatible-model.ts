import { AgentFlowError, type ChatRequest, type ChatResponse, type LanguageModel, assertNever } from '@agentflow/core';
import { z } from 'zod';
import { type HttpEnvironment, httpSettingsSchema } from '../transport/http-settings';
import { createJsonTransport } from '../transport/json-transport';
import { replyShapeError } from '../transport/reply-shape-error';
import { parseModelSettings } from '../transport/split-environment';
import { openAIChatResponseSchema } from './openai-wire';

export const openAICompatibleModelSettingsSchema = httpSettingsSchema
  .extend({
    model: z.string().min(1).describe('Model name the server expects, e.g. "deepseek-chat" or a vLLM served name.'),
    endpoints: httpSettingsSchema.shape.endpoints
      .default(['https://api.openai.com/v1'])
      .describe('Base URLs ending before /chat/completions (default: OpenAI), served in turn.'),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('Name of the environment variable holding the API key; unset sends no Authorization header (vLLM).'),
    responseFormat: z
      .enum(['json_schema', 'json_object', 'none'])
      .default('json_schema')
      .describe('How a JSON schema is requested: json_schema (OpenAI, vLLM), json_object (DeepSeek), or none.'),
    strictSchema: z
      .boolean()
      .default(false)
      .describe(
        'json_schema.strict; OpenAI strict mode rejects free-form objects such as action_input, so it is off by default.',
      ),
    schemaName: z.string().min(1).default('output').describe('json_schema.name sent with the schema.'),
    maxTokensField: z
      .enum(['max_tokens', 'max_completion_tokens'])
      .default('max_tokens')
      .describe('Field that carries maxTokens: max_tokens (vLLM, DeepSeek) or max_completion_tokens (OpenAI reasoning models).'),
    temperature: z.number().nonnegative().optional().describe('Default temperature when a request sets none.'),
    seed: z.number().int().optional().describe('Default seed when a request sets none.'),
  })
  .strict();

/** Settings of {@link createOpenAICompatibleModel}; `env` defaults to `process.env`. */
export type OpenAICompatibleModelSettings = z.input<typeof openAICompatibleModelSettingsSchema> &
  HttpEnvironment & { env?: Record<string, string | undefined> };

/**
 * A model behind an OpenAI-compatible `POST {baseURL}/chat/completions` (OpenAI, vLLM,
 * DeepSeek). Throws INVALID_CONFIG at construction when the named API key variable is unset.
 */
export function createOpenAICompatibleModel(input: OpenAICompatibleModelSettings): LanguageModel {
  const { settings, environment, extra } = parseModelSettings(
    openAICompatibleModelSettingsSchema,
    { ...input },
    'OpenAI-compatible model',
    ['env'],
  );
  const env = (extra.env as Record<string, string | undefined> | undefined) ?? process.env;
  const headers: Record<string, string> = {};
  if (settings.apiKeyEnv !== undefined) {
    const key = env[settings.apiKeyEnv];
    if (!key) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `The API key variable ${settings.apiKeyEnv} is not set. Export ${settings.apiKeyEnv}=<your key> for ${settings.endpoints.join(', ')}, or drop apiKeyEnv for a server without authentication.`,
        details: { apiKeyEnv: settings.apiKeyEnv },
      });
    }
    headers.authorization = `Bearer ${key}`;
  }
  const transport = createJsonTransport(settings, environment);

  function responseFormat(schema: Record<string, unknown> | undefined): Record<string, unknown> {
    if (!schema) return {};
    switch (settings.responseFormat) {
      case 'json_schema':
        return {
          response_format: {
            type: 'json_schema',
            json_schema: { name: settings.schemaName, schema, strict: settings.strictSchema },
          },
        };
      case 'json_object':
        return { response_format: { type: 'json_object' } };
      case 'none':
        return {};
      default:
        return assertNever(settings.responseFormat, 'responseFormat');
    }
  }

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const temperature = request.temperature ?? settings.temperature;
    const seed = request.seed ?? settings.seed;
    const body = {
      model: settings.model,
      // Chat completions accept role "tool" only as a reply to a tool call; send tool text as user text.
      messages: request.messages.map(({ role, content }) => ({ role: role === 'tool' ? 'user' : role, content })),
      ...(temperature === undefined ? {} : { temperature }),
      ...(seed === undefined ? {} : { seed }),
      ...(request.topP === undefined ? {} : { top_p: request.topP }),
      ...(request.maxTokens === undefined ? {} : { [settings.maxTokensField]: request.maxTokens }),
      ...(request.stop && request.stop.length > 0 ? { stop: request.stop } : {}),
      ...responseFormat(request.jsonSchema),
    };
    const reply = await transport.post('/chat/completions', body, { signal: request.signal, headers });
    const parsed = openAIChatResponseSchema.safeParse(reply.body);
    if (!parsed.success) {
      throw replyShapeError(reply, {
        expected: 'a chat completion with at least one choice',
        error: parsed.error,
        advice:
          "Check the endpoint's base URL (a config's baseUrl, or endpoints): it must end before /chat/completions on an " +
          "OpenAI-compatible server (an Ollama server takes kind ollama); a reply without choices may also be the server's refusal, in its log.",
      });
    }
    const data = parsed.data;
    const choice = data.choices[0]!;
    return {
      text: choice.message.content ?? choice.message.refusal ?? '',
      finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
      model: data.model,
      ...(data.usage
        ? { usage: { promptTokens: data.usage.prompt_tokens, completionTokens: data.usage.completion_tokens } }
        : {}),
    };
  }

  return { specificationVersion: 'v1', provider: 'openai', modelId: settings.model, chat };
}
