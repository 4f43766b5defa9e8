import { AgentFlowError, readLimitedBody } from '@agentflow/core';
import { parseRetryAfterMs } from './backoff';
import { describeReplyText } from './describe-reply';
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

/** Bytes of the start of a body kept to quote in an error (the quote itself is cut shorter). */
const HEAD_BYTES = 1024;

/** What came back so far in one attempt: the status, the content type, the start of the body and its length. */
export interface Received {
  status?: number;
  contentType?: string | null;
  head: Uint8Array;
  bytes: number;
}

/** `response` with its body passed through a counter that keeps the first bytes, for errors that quote it. */
function recorded(response: Response, received: Received): Response {
  received.status = response.status;
  received.contentType = response.headers.get('content-type');
  // A response the Response constructor cannot rebuild (no body, or a status below 200) is read as it is.
  if (!response.body || response.status < 200) return response;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (received.head.length < HEAD_BYTES) received.head = Buffer.concat([received.head, chunk.subarray(0, HEAD_BYTES - received.head.length)]);
        received.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** An empty {@link Received}, for one attempt. */
export const nothingReceived = (): Received => ({ head: new Uint8Array(0), bytes: 0 });

/** What the server had sent when the attempt ended: nothing, or headers and part of a body. */
export function describeReceived(received: Received): string {
  if (received.status === undefined) return 'no response headers';
  if (received.bytes === 0) return `HTTP ${received.status} headers, then no body`;
  const text = Buffer.from(received.head).toString('utf8');
  return `HTTP ${received.status} headers, then ${received.bytes} bytes of body, beginning ${describeReplyText(text, received.contentType)}`;
}

/**
 * One POST: at most `timeoutMs` (a long timer, never overflowed), the body read up to
 * `maxResponseBytes` (past it the request is aborted and the attempt is fatal). When
 * `signal` aborts it throws nothing itself: the caller tells cancellation from failure.
 * Every failure says what the server had sent (cut to about 200 characters); `received` records
 * it as it arrives, for a caller that stops waiting before the attempt returns.
 */
export async function attemptPost(
  url: string,
  request: { body: string; headers?: Record<string, string> | undefined; signal: AbortSignal },
  settings: AttemptSettings,
  received: Received = nothingReceived(),
): Promise<Attempt> {
  const timeout = new AbortController();
  const cancelTimer = setLongTimeout(() => timeout.abort(), settings.timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout.signal]);
  try {
    const response = recorded(
      await settings.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...request.headers },
        body: request.body,
        signal,
      }),
      received,
    );
    const text = await readLimitedBody(response, { maxBytes: settings.maxResponseBytes, url: `POST ${url}`, setting: 'maxResponseBytes' });
    if (response.ok) {
      try {
        return { kind: 'ok', status: response.status, body: JSON.parse(text) };
      } catch {
        return { kind: 'retry', status: response.status, reason: `response body is not valid JSON: ${describeReplyText(text, received.contentType)}` };
      }
    }
    const detail = describeReplyText(text, received.contentType);
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
      if (received.bytes === 0) return { kind: 'fatal', error };
      const began = describeReplyText(Buffer.from(received.head).toString('utf8'), received.contentType);
      return {
        kind: 'fatal',
        error: new AgentFlowError({ code: 'RESPONSE_TOO_LARGE', message: `${error.message} The body began: ${began}.`, cause: error, details: { ...error.details, began } }),
      };
    }
    if (request.signal.aborted) {
      // The caller's deadline or cancellation: the caller reports it, with what had come back.
      return { kind: 'retry', reason: `cut short by the call's deadline or cancellation (${describeReceived(received)})` };
    }
    if (timeout.signal.aborted) {
      return { kind: 'retry', reason: `no complete response within ${settings.timeoutMs} ms (${describeReceived(received)})`, timedOut: true };
    }
    const sent = received.status === undefined ? '' : ` (${describeReceived(received)})`;
    return { kind: 'retry', reason: `connection failed: ${describeNetworkError(error)}${sent}` };
  } finally {
    cancelTimer();
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${error.message} (${detail})` : error.message;
}
