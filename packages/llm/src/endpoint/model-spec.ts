// Models named on a command line: `ollama:MODEL`, `openai:MODEL` (a chat model behind HTTP, at
// the URLs of a connection) and, for a planner, `local:DIR` (a model folder).
import { AgentFlowError, assertNever, describeValue, type LanguageModel } from '@agentflow/core';
import { createOllamaModel } from '../ollama/ollama-model';
import { createOpenAICompatibleModel } from '../openai/openai-compatible-model';

/** A chat model behind HTTP: `ollama:MODEL` or `openai:MODEL`. */
export type ChatModelSpec = { kind: 'ollama'; model: string } | { kind: 'openai'; model: string };

/** Which model plans: `ollama:MODEL`, `openai:MODEL` or `local:DIR`. */
export type PlannerSpec = ChatModelSpec | { kind: 'local'; dir: string };

/** Where the HTTP models of a spec are, and how they are asked (a command's URL and key options). */
export interface ChatModelConnection {
  ollamaUrl: string;
  openaiBaseUrl: string;
  /** The variable holding the OpenAI-compatible key; '' sends none (vLLM). */
  apiKeyEnv: string;
  /** How the OpenAI-compatible server is asked for JSON; default the back end's (json_schema). */
  responseFormat?: 'json_schema' | 'json_object' | 'none';
  /** Requests in flight at once per model; default the back end's. */
  concurrency?: number;
  /** Cap on one reply body (the back ends' maxResponseBytes); default theirs (8 MiB). */
  maxResponseBytes?: number | undefined;
  /** One attempt at most, in ms (the back ends' timeoutMs); default theirs (120 s). */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (the back ends' maxRetries); default theirs (4). */
  maxRetries?: number | undefined;
  /** One call at most, every attempt and backoff included, in ms (the back ends' totalTimeoutMs); default theirs (600 s). */
  totalTimeoutMs?: number | undefined;
}

/**
 * Parses an option naming a chat model: ollama:MODEL or openai:MODEL (the part after the first
 * colon is the model). Anything else is an INVALID_ARGUMENT naming `option`.
 */
export function parseChatModelSpec(option: string, text: string): ChatModelSpec {
  const colon = text.indexOf(':');
  const kind = text.slice(0, Math.max(0, colon));
  const model = text.slice(colon + 1);
  if (colon > 0 && model !== '' && (kind === 'ollama' || kind === 'openai')) return { kind, model };
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${option} ${describeValue(text)} is not one of ollama:MODEL or openai:MODEL (e.g. openai:deepseek-chat).`,
    details: { option, value: text },
  });
}

/** Parses `--planner`; the part after the first colon is the model (Ollama tags contain colons). */
export function parsePlannerSpec(text: string): PlannerSpec {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? '' : text.slice(colon + 1);
  if (rest !== '') {
    if (kind === 'ollama' || kind === 'openai') return { kind, model: rest };
    if (kind === 'local') return { kind, dir: rest };
  }
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `--planner ${describeValue(text)} is not one of ollama:MODEL, openai:MODEL or local:DIR (e.g. ollama:qwen3:8b).`,
    details: { planner: text },
  });
}

/** The HTTP settings a connection sets; the back ends' defaults for the others. */
const httpSettingsOf = (connection: ChatModelConnection) => ({
  ...(connection.concurrency === undefined ? {} : { concurrency: connection.concurrency }),
  ...(connection.maxResponseBytes === undefined ? {} : { maxResponseBytes: connection.maxResponseBytes }),
  ...(connection.timeoutMs === undefined ? {} : { timeoutMs: connection.timeoutMs }),
  ...(connection.maxRetries === undefined ? {} : { maxRetries: connection.maxRetries }),
  ...(connection.totalTimeoutMs === undefined ? {} : { totalTimeoutMs: connection.totalTimeoutMs }),
});

/** The model of an HTTP spec, at the connection's URLs; an empty `apiKeyEnv` sends no key (vLLM). */
export function createChatModelFromSpec(spec: ChatModelSpec, connection: ChatModelConnection): LanguageModel {
  switch (spec.kind) {
    case 'ollama':
      return createOllamaModel({ model: spec.model, endpoints: [connection.ollamaUrl], ...httpSettingsOf(connection) });
    case 'openai':
      return createOpenAICompatibleModel({
        model: spec.model,
        endpoints: [connection.openaiBaseUrl],
        ...(connection.responseFormat === undefined ? {} : { responseFormat: connection.responseFormat }),
        ...httpSettingsOf(connection),
        ...(connection.apiKeyEnv ? { apiKeyEnv: connection.apiKeyEnv } : {}),
      });
    default:
      return assertNever(spec, 'endpoint kind');
  }
}
