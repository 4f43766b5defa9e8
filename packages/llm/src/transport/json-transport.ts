import { AgentFlowError, describeValue } from '@agentflow/core';
import PQueue from 'p-queue';
import { fullJitterBackoffMs, parseRetryAfterMs } from './backoff';
import type { HttpEnvironment, HttpSettings } from './http-settings';
import { abortedError, sleep as defaultSleep } from './sleep';

/** A parsed JSON response and where it came from. */
export interface JsonReply {
  url: string;
  status: number;
  body: unknown;
}

export interface JsonPostOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
}

/** POSTs JSON to a list of endpoints with retries, failover and a concurrency limit per endpoint. */
export interface JsonTransport {
  post(path: string, body: unknown, options?: JsonPostOptions): Promise<JsonReply>;
  readonly endpoints: readonly string[];
}

type Attempt =
  | { kind: 'ok'; status: number; body: unknown }
  | { kind: 'fatal'; error: AgentFlowError }
  | { kind: 'retry'; status?: number; reason: string; retryAfterMs?: number; timedOut?: boolean };

type RetryAttempt = Extract<Attempt, { kind: 'retry' }>;

/** Builds the transport behind the HTTP models. */
export function createJsonTransport(settings: HttpSettings, environment: HttpEnvironment = {}): JsonTransport {
  const fetchImplementation = environment.fetch ?? globalThis.fetch;
  const random = environment.random ?? Math.random;
  const wait = environment.sleep ?? defaultSleep;
  const now = environment.now ?? Date.now;
  const endpoints = settings.endpoints.map((url) => ({
    baseUrl: url.replace(/\/+$/, ''),
    queue: new PQueue({ concurrency: settings.concurrency }),
  }));
  let cursor = 0;

  async function attemptOnce(url: string, body: string, options: JsonPostOptions): Promise<Attempt> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
    try {
      const response = await fetchImplementation(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
        body,
        signal,
      });
      const text = await response.text();
      if (response.ok) {
        try {
          return { kind: 'ok', status: response.status, body: JSON.parse(text) };
        } catch {
          return { kind: 'retry', status: response.status, reason: `response body is not valid JSON: ${describeValue(text, 120)}` };
        }
      }
      const detail = describeErrorBody(text);
      if (response.status === 429 || response.status === 408 || response.status >= 500) {
        const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), now());
        return {
          kind: 'retry',
          status: response.status,
          reason: detail,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      }
      return {
        kind: 'fatal',
        error: new AgentFlowError({
          code: 'HTTP_ERROR',
          message: `POST ${url} failed with HTTP ${response.status}: ${detail}`,
          details: { url, status: response.status, body: text.slice(0, 2000) },
        }),
      };
    } catch (error) {
      if (options.signal?.aborted) return { kind: 'fatal', error: abortedError(options.signal, `POST ${url}`) };
      if (timeout.signal.aborted) {
        return { kind: 'retry', reason: `no complete response within ${settings.timeoutMs} ms`, timedOut: true };
      }
      return { kind: 'retry', reason: `connection failed: ${describeNetworkError(error)}` };
    } finally {
      clearTimeout(timer);
    }
  }

  async function post(path: string, payload: unknown, options: JsonPostOptions = {}): Promise<JsonReply> {
    const body = JSON.stringify(payload);
    const start = cursor;
    cursor = (cursor + 1) % endpoints.length;
    const totalAttempts = settings.maxRetries + 1;
    const tried = new Set<string>();
    let last: RetryAttempt | undefined;
    let lastUrl = '';
    let retryAfterMs = 0;
    for (let attempt = 0; attempt < totalAttempts; attempt++) {
      // Fail over to the next endpoint at once; back off only after a full round of them.
      if (attempt > 0 && attempt % endpoints.length === 0) {
        const round = attempt / endpoints.length - 1;
        const jitter = fullJitterBackoffMs(round, settings.initialBackoffMs, settings.maxBackoffMs, random);
        const delay = Math.max(jitter, Math.min(retryAfterMs, settings.maxRetryAfterMs));
        retryAfterMs = 0;
        await wait(delay, options.signal);
      }
      if (options.signal?.aborted) throw abortedError(options.signal, `POST ${path}`);
      const endpoint = endpoints[(start + attempt) % endpoints.length]!;
      const url = endpoint.baseUrl + path;
      lastUrl = url;
      tried.add(url);
      let outcome: Attempt;
      try {
        outcome = await endpoint.queue.add(() => attemptOnce(url, body, options), {
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (error) {
        if (options.signal?.aborted) throw abortedError(options.signal, `POST ${url}`);
        throw error;
      }
      if (outcome.kind === 'ok') return { url, status: outcome.status, body: outcome.body };
      if (outcome.kind === 'fatal') throw outcome.error;
      last = outcome;
      if (outcome.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs, outcome.retryAfterMs);
    }
    const status = last?.status;
    const urls = [...tried];
    throw new AgentFlowError({
      code: status !== undefined ? 'HTTP_ERROR' : last?.timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
      message:
        `POST ${urls.length > 1 ? urls.join(', ') : lastUrl} failed after ${totalAttempts} attempt(s); ` +
        `last status: ${status === undefined ? 'no response' : `HTTP ${status}`} (${last?.reason ?? 'unknown'}). ` +
        'Check that the server is running and reachable, or raise maxRetries/timeoutMs.',
      details: { url: lastUrl, urls, status, attempts: totalAttempts },
    });
  }

  return { post, endpoints: endpoints.map((endpoint) => endpoint.baseUrl) };
}

/** Pulls the message out of `{"error": "..."}` (Ollama) or `{"error": {"message": ...}}` (OpenAI). */
function describeErrorBody(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed?.error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
  } catch {
    // Not JSON: show the raw text.
  }
  return describeValue(text.trim() || '(empty body)', 200);
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${error.message} (${detail})` : error.message;
}
