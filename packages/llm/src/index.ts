/**
 * @agentflow/llm: chat back ends behind the core `LanguageModel` interface, and
 * structured output that never crashes on malformed model text.
 */

/** Ollama's native `/api/chat` back end. */
export { createOllamaModel, ollamaModelSettingsSchema, type OllamaModelSettings } from './ollama/ollama-model';
/** OpenAI-compatible `/chat/completions` back end (OpenAI, vLLM, DeepSeek). */
export {
  createOpenAICompatibleModel,
  openAICompatibleModelSettingsSchema,
  type OpenAICompatibleModelSettings,
} from './openai/openai-compatible-model';
/** A chat endpoint as a config names it (Ollama or OpenAI-compatible), its model, and a probe that it is up. */
export { chatEndpointSchema, createChatModel, type ChatEndpoint } from './endpoint/chat-endpoint';
export {
  assertChatEndpointsAnswer,
  chatEndpointProbeUrl,
  type ChatEndpointProbe,
  type NamedChatEndpoint,
  probeChatEndpoint,
  probeChatEndpoints,
  type ProbeChatEndpointSettings,
} from './endpoint/probe-chat-endpoint';
/** Models named on a command line: `ollama:MODEL`, `openai:MODEL`, and a planner's `local:DIR`. */
export {
  createChatModelFromSpec,
  parseChatModelSpec,
  parsePlannerSpec,
  type ChatModelConnection,
  type ChatModelSpec,
  type PlannerSpec,
} from './endpoint/model-spec';
/**
 * vLLM servers as a rollout back end: prompts as token ids through /v1/completions, completions
 * back as token ids with sampling log-probs, guided decoding by the JSON schema, and the runtime
 * LoRA endpoints (/v1/load_lora_adapter, /v1/unload_lora_adapter) to hot-swap the adapter.
 */
export {
  createVllmServers,
  vllmServersSettingsSchema,
  type AdapterLoadReport,
  type VllmServers,
  type VllmServersSettings,
} from './vllm/vllm-servers';
/** Keeps every vLLM server on the policy's adapter version, resumably (pending version in the run's state). */
export {
  createAdapterSync,
  type AdapterSync,
  type AdapterSyncSettings,
  type AdapterSyncState,
  type AdapterVersion,
} from './vllm/adapter-sync';
/**
 * A trainer's rollouts on vLLM servers: each step's adapter saved and loaded on every server
 * before its rollouts, the trained policy's old log-probs checked token by token against the
 * servers' sampling log-probs; or in-process with the trained policy itself.
 */
export { createVllmRollouts, type VllmRolloutsSettings } from './vllm/vllm-rollouts';
export { createLocalRollouts, type LocalRolloutsSettings, type RolloutBackend } from './rollouts/rollout-backend';
/** The rollout back end a trainer's config names (local or vLLM), its settings schema and the vLLM state file. */
export { rolloutsSettingsSchema, type RolloutsSettings } from './rollouts/rollouts-settings';
export { createRolloutBackend, vllmStatePath, type RolloutBackendSettings } from './rollouts/create-rollout-backend';
/** The token-exact contract, measured: sampled completions against a training engine's recomputed log-probs. */
export {
  createTokenExactCheck,
  type TokenExactCheck,
  type TokenExactCheckSettings,
  type TokenExactFigures,
} from './vllm/token-exact-check';
export { vllmRequestSettingsSchema, type VllmRequestSettings } from './vllm/vllm-completion';
export { parseTokenIdString, TOKEN_ID_PREFIX, vllmCompletionResponseSchema, type VllmCompletionResponse } from './vllm/vllm-wire';
/** A local `TrainablePolicy` as a `LanguageModel`, with token ids and log-probs. */
export { createPolicyModel, type ChatTokenizer, type PolicyModelSettings } from './policy/policy-model';
/** Schema-validated JSON output with repair, degradation and a typed failure. */
export {
  generateObject,
  type GenerateObjectResult,
  type GenerateObjectSettings,
  type GenerationAttempt,
} from './structured/generate-object';
/** The last balanced JSON object in a text, or undefined. */
export { extractLastJsonObject } from './structured/extract-json';
/** Timeouts, retries, endpoints and concurrency shared by the HTTP back ends. */
export {
  httpSettingsSchema,
  type HttpEnvironment,
  type HttpSettings,
  type HttpSettingsInput,
} from './transport/http-settings';
/** The retrying, failing-over JSON POST transport under the HTTP back ends. */
export { createJsonTransport, type JsonPostOptions, type JsonReply, type JsonTransport } from './transport/json-transport';
/** Full-jitter backoff and Retry-After parsing. */
export { fullJitterBackoffMs, parseRetryAfterMs } from './transport/backoff';
/** One deadline for a run or a call: a signal that carries it, so every retry and wait under it ends in time. */
export {
  createDeadline,
  deadlineOf,
  formatSeconds,
  type Deadline,
  type DeadlineSettings,
  type SignalDeadline,
} from './transport/deadline';
/** Timers of any length (setTimeout overflows past 2^31 - 1 ms). */
export { MAX_TIMER_MS, setLongTimeout } from './transport/long-timeout';
