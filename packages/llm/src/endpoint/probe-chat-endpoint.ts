import { AgentFlowError } from '@agentflow/core';
import type { ChatEndpoint } from './chat-endpoint';

/** Settings of {@link probeChatEndpoint}: the injected outside world. */
export interface ProbeChatEndpointSettings {
  /** Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Where the API key is looked up (default process.env). */
  env?: Record<string, string | undefined>;
  /** How long the endpoint may take to answer (default 3 s: a probe, not a request). */
  timeoutMs?: number;
}

/** What {@link probeChatEndpoint} found. */
export interface ChatEndpointProbe {
  /** Whether the endpoint answered: a 2xx, or a 401 (reachable; the key is another matter). */
  ok: boolean;
  /** The URL asked and its answer, or why there was none. */
  detail: string;
  /** Set when an OpenAI-compatible endpoint's key variable is unset: what is missing. */
  missingApiKey?: string;
}

/** The cheap GET that shows an endpoint is up: Ollama's /api/tags, an OpenAI-compatible API's /models. */
export function chatEndpointProbeUrl(endpoint: ChatEndpoint): string {
  return endpoint.kind === 'ollama' ? `${endpoint.url.replace(/\/$/, '')}/api/tags` : `${endpoint.baseUrl.replace(/\/$/, '')}/models`;
}

/**
 * Whether a chat endpoint is reachable, without a chat request: one GET of
 * {@link chatEndpointProbeUrl} (with the bearer key when its variable is set), and whether the
 * key an OpenAI-compatible endpoint needs is in the environment. Never throws.
 */
export async function probeChatEndpoint(endpoint: ChatEndpoint, settings: ProbeChatEndpointSettings = {}): Promise<ChatEndpointProbe> {
  const fetchImpl = settings.fetch ?? fetch;
  const env = settings.env ?? process.env;
  const key = endpoint.kind === 'openai' ? env[endpoint.apiKeyEnv] : undefined;
  const missingApiKey = endpoint.kind === 'openai' && !key ? { missingApiKey: `environment variable ${endpoint.apiKeyEnv} is not set` } : {};
  const url = chatEndpointProbeUrl(endpoint);
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  try {
    const response = await fetchImpl(url, { headers, signal: AbortSignal.timeout(settings.timeoutMs ?? 3000) });
    return response.ok || response.status === 401
      ? { ok: true, detail: `${url} answered ${response.status}`, ...missingApiKey }
      : { ok: false, detail: `${url} answered HTTP ${response.status}`, ...missingApiKey };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return { ok: false, detail: `${url} is unreachable (${cause})`, ...missingApiKey };
  }
}

/** An endpoint a caller depends on, named as its user configured it. */
export interface NamedChatEndpoint {
  /** What it serves, e.g. `fixed modules`, `step judge`. */
  what: string;
  /** The config key that sets it, e.g. `fixedModules`. */
  key: string;
  /** What to set instead when it is not wanted, e.g. `fixedModules: null (rule verifier)`. */
  without?: string;
  endpoint: ChatEndpoint;
}

/** Each endpoint probed at once ({@link probeChatEndpoint}: never throws). */
export function probeChatEndpoints<Entry extends NamedChatEndpoint>(
  entries: readonly Entry[],
  settings: ProbeChatEndpointSettings = {},
): Promise<Array<Entry & { probe: ChatEndpointProbe }>> {
  return Promise.all(entries.map(async (entry) => ({ ...entry, probe: await probeChatEndpoint(entry.endpoint, settings) })));
}

/**
 * Refuses endpoints that do not answer (or whose API key is unset), before work that needs them:
 * a server that is down or hangs would otherwise fail each request only at its timeout, minutes
 * later. RUNTIME_ERROR with a line per endpoint: its model, what the probe got, the key to change.
 */
export async function assertChatEndpointsAnswer(entries: readonly NamedChatEndpoint[], settings: ProbeChatEndpointSettings = {}): Promise<void> {
  const failed = (await probeChatEndpoints(entries, settings)).filter(({ probe }) => !probe.ok || probe.missingApiKey);
  if (failed.length === 0) return;
  throw new AgentFlowError({
    code: 'RUNTIME_ERROR',
    message: failed
      .map(
        ({ what, key, without, endpoint, probe }) =>
          `${what} (${endpoint.kind} ${endpoint.model}): ${probe.ok ? probe.missingApiKey : probe.detail}; start that server or change ${key} (its url and model)${without ? `, or set ${without}` : ''}.`,
      )
      .join('\n'),
    details: { endpoints: failed.map(({ key }) => key) },
  });
}
