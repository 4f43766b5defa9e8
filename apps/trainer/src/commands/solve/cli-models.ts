// The models that `agentflow solve` and `agentflow eval` name on the command line: the planner
// (`--planner`) and the fixed verifier and generator (`--fixed-modules`).
import { AgentFlowError, assertNever, describeValue, type LanguageModel } from '@agentflow/core';
import { createOllamaModel, createOpenAICompatibleModel } from '@agentflow/llm';
import { createLocalPlannerModel, type LocalPlannerModel } from './local-planner';
import { parsePlannerSpec } from './planner-spec';

/** Where the HTTP models of `solve` and `eval` are, and how they are asked (their URL and key options). */
export interface ModelConnection {
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
}

/** A chat model behind HTTP: `ollama:MODEL` or `openai:MODEL` (the fixed modules'). */
export type EndpointSpec = { kind: 'ollama'; model: string } | { kind: 'openai'; model: string };

/** Parses `--fixed-modules`: ollama:MODEL or openai:MODEL (the part after the first colon is the model). */
export function parseEndpointSpec(option: string, text: string): EndpointSpec {
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

/** The HTTP settings a connection sets; the back ends' defaults for the others. */
const httpSettingsOf = (connection: ModelConnection) => ({
  ...(connection.concurrency === undefined ? {} : { concurrency: connection.concurrency }),
  ...(connection.maxResponseBytes === undefined ? {} : { maxResponseBytes: connection.maxResponseBytes }),
});

/** The model of an HTTP spec, at the connection's URLs; an empty `apiKeyEnv` sends no key (vLLM). */
export function endpointModelOf(spec: EndpointSpec, connection: ModelConnection): LanguageModel {
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

/**
 * The planner of `--planner`: an HTTP model, or the local ONNX policy of a model folder
 * (loaded lazily, released at the end). `flat` actions for HTTP servers, whose JSON-schema
 * support stops short of a root union; `tied` for the local grammar.
 */
export async function createPlannerModel(planner: string, connection: ModelConnection): Promise<LocalPlannerModel & { actionSchemaStyle: 'flat' | 'tied' }> {
  const spec = parsePlannerSpec(planner);
  switch (spec.kind) {
    case 'ollama':
    case 'openai':
      return { model: endpointModelOf(spec, connection), release: async () => {}, actionSchemaStyle: 'flat' };
    case 'local':
      return { ...(await createLocalPlannerModel(spec.dir)), actionSchemaStyle: 'tied' };
    default:
      return assertNever(spec, 'planner kind');
  }
}
