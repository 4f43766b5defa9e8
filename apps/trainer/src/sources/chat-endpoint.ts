import { assertNever, type LanguageModel } from '@agentflow/core';
import { createOllamaModel, createOpenAICompatibleModel } from '@agentflow/llm';
import type { RunConfig } from '../config/schema';

/** A chat endpoint of the config (`fixedModules`, the judge's `endpoint`). */
export type ChatEndpointConfig = NonNullable<RunConfig['fixedModules']>;

/** The core LanguageModel of a configured endpoint: Ollama's native /api/chat, or an OpenAI-compatible /chat/completions. */
export function chatModelOf(endpoint: ChatEndpointConfig): LanguageModel {
  switch (endpoint.kind) {
    case 'ollama':
      return createOllamaModel({ model: endpoint.model, endpoints: [endpoint.url] });
    case 'openai':
      return createOpenAICompatibleModel({
        model: endpoint.model,
        endpoints: [endpoint.baseUrl],
        apiKeyEnv: endpoint.apiKeyEnv,
        responseFormat: endpoint.responseFormat,
      });
    default:
      return assertNever(endpoint, 'endpoint kind');
  }
}
