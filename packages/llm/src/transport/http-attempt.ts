import { AgentFlowError, describeValue, readLimitedBody } from '@agentflow/core';
import { parseRetryAfterMs } from './backoff';
import { setLongTimeout } from './long-timeout';

/** How one attempt ended: a parsed body, a failure not worth repeating, or one worth a retry. */
export type Attempt =
  | { kind: 'ok'; status: number; body: unknown }
  | { kind: 'fatal'; error: AgentFlowError }
  | {
      kind: 'retry';
      status?: number;
      reason: string;
      /** The server's Retry-After as milliseconds, and as it was written. */
      retryAfterMs?: number;
      retryAfter?: string;
      timedOut?: boolean;
    };

export interface AttemptSettings {
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  maxResponseBytes: number;
  now: () => number;
}

/**
 * One POST: at most `timeoutMs` (a long timer, never overflowed), the body read up to
 * `maxResponseBytes` (past it the request is aborted and the attempt is fatal). When
 * `signal` aborts it throws nothing itself: the caller tells cancellation from failure.
 */
export async function attemptPost(
  url: string,
  request: { body: string; headers?: Record<string, string> | undefined; signal: AbortSignal },
  settings: AttemptSettings,
): Promise<Attempt> {
  const timeout = new AbortController();
  const cancelTimer = setLongTimeout(() => timeout.abort(), settings.timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout.signal]);
  try {
    const response = await settings.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...request.headers },
      body: request.body,
      signal,
    });
    const text = await readLimitedBody(response, { maxBytes: settings.maxResponseBytes, url: `POST ${url}`, setting: 'maxResponseBytes' });
    if (response.ok) {
      try {
        return { kind: 'ok', status: response.status, body: JSON.parse(text) };
      } catch {
        return { kind: 'retry', status: response.status, reason: `response body is not valid JSON: ${describeValue(text, 120)}` };
      }
    }
    const detail = describeErrorBody(text);
    if (response.status === 429 || response.status === 408 || response.status >= 500) {
      const header = response.headers.get('retry-after');
      const retryAfterMs = parseRetryAfterMs(header, settings.now());
      return {
        kind: 'retry',
        status: response.status,
        reason: detail,
        ...(retryAfterMs === undefined || header === null ? {} : { retryAfterMs, retryAfter: header.trim() }),
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
    if (AgentFlowError.hasCode(error, 'RESPONSE_TOO_LARGE')) {
      // Repeating the request would fetch the same flood; drop the connection now.
      timeout.abort();
      return { kind: 'fatal', error };
    }
    if (timeout.signal.aborted && !request.signal.aborted) {
      return { kind: 'retry', reason: `no complete response within ${settings.timeoutMs} ms`, timedOut: true };
    }
    return { kind: 'retry', reason: `connection failed: ${describeNetworkError(error)}` };
  } finally {
    cancelTimer();
  }
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
