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
