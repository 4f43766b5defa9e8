import { AgentFlowError, readLimitedBody } from '@agentflow/core';

/** How the MLflow REST client reaches its server. */
export interface MlflowRestSettings {
  /** The tracking server, e.g. `http://127.0.0.1:5000` (what `MLFLOW_TRACKING_URI` names). */
  trackingUri: string;
  /** Deadline of one request in milliseconds (headers and body). */
  timeoutMs: number;
  /** Further attempts after a network error, 429 or 5xx (not after a deadline: a server that hangs is not asked again). */
  retries: number;
  /** Sent with every request, e.g. `authorization: Bearer <token>`. */
  headers?: Readonly<Record<string, string>>;
  /** The transport (default the global `fetch`). */
  fetch?: typeof fetch;
  /** Aborts every request in flight (the tracker's finish deadline). */
  signal?: AbortSignal;
  /** Waits between attempts (default `setTimeout`); tests pass a quicker one. */
  sleep?: (ms: number) => Promise<void>;
}

/** Replies of MLflow over 1 MiB are refused: every reply the tracker reads is a few hundred bytes. */
const MAX_REPLY_BYTES = 1024 * 1024;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** An MLflow REST error reply: `{ error_code, message }`. */
function errorOf(status: number, method: string, url: string, text: string): AgentFlowError {
  let detail = text.slice(0, 300);
  try {
    const body = JSON.parse(text) as { error_code?: string; message?: string };
    if (body.error_code || body.message) detail = `${body.error_code ?? ''}${body.message ? `: ${body.message}` : ''}`;
  } catch {
    // Not JSON (a proxy's page): its first bytes are the detail.
  }
  return new AgentFlowError({
    code: 'HTTP_ERROR',
    message: `${method} ${url} answered ${status}${detail ? ` (${detail})` : ''}.`,
    details: { status, url, errorCode: detail.split(':')[0] },
  });
}

const retryable = (error: unknown) =>
  AgentFlowError.hasCode(error, 'NETWORK_ERROR') ||
  (AgentFlowError.hasCode(error, 'HTTP_ERROR') && [429, 500, 502, 503, 504].includes(Number((error.details as { status?: number })?.status)));

/**
 * One MLflow REST call: JSON in, JSON out, each attempt under `timeoutMs`, retried with
 * doubling waits (250 ms, 500 ms, ...) after a network error, 429 or 5xx. Throws TIMEOUT,
 * NETWORK_ERROR or HTTP_ERROR naming the method, the URL and what the server said.
 */
export async function mlflowRequest<T>(settings: MlflowRestSettings, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
  const url = `${settings.trackingUri.replace(/\/+$/, '')}${path}`;
  const transport = settings.fetch ?? fetch;
  const sleep = settings.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptOnce<T>(transport, settings, method, url, body, contentType);
    } catch (error) {
      if (attempt >= settings.retries || !retryable(error) || settings.signal?.aborted) throw error;
      await sleep(250 * 2 ** attempt);
    }
  }
}

async function attemptOnce<T>(transport: typeof fetch, settings: MlflowRestSettings, method: string, url: string, body: unknown, contentType: string): Promise<T> {
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const signal = settings.signal ? AbortSignal.any([deadline, settings.signal]) : deadline;
  let response: Response;
  try {
    response = await transport(url, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': contentType }), ...settings.headers },
      ...(body === undefined ? {} : { body: body instanceof Uint8Array ? body : JSON.stringify(body) }),
      signal,
    });
  } catch (error) {
    if (deadline.aborted) {
      throw new AgentFlowError({ code: 'TIMEOUT', message: `${method} ${url} did not answer within ${settings.timeoutMs} ms.`, cause: error });
    }
    if (settings.signal?.aborted) throw new AgentFlowError({ code: 'ABORTED', message: `${method} ${url} was cut off at the tracker's finish deadline.`, cause: error });
    throw new AgentFlowError({ code: 'NETWORK_ERROR', message: `${method} ${url} failed: ${(error as Error).message}.`, cause: error });
  }
  let text: string;
  try {
    text = await readLimitedBody(response, { maxBytes: MAX_REPLY_BYTES, url: `${method} ${url}`, setting: 'the MLflow reply cap (1 MiB)' });
  } catch (error) {
    if (AgentFlowError.isInstance(error)) throw error;
    const code = deadline.aborted ? 'TIMEOUT' : 'NETWORK_ERROR';
    throw new AgentFlowError({ code, message: `${method} ${url}: the reply ${deadline.aborted ? `did not end within ${settings.timeoutMs} ms` : `broke off: ${(error as Error).message}`}.`, cause: error });
  }
  if (!response.ok) throw errorOf(response.status, method, url, text);
  try {
    return (text.trim() === '' ? {} : JSON.parse(text)) as T;
  } catch (error) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${method} ${url} answered ${response.status} with a body that is not JSON: ${JSON.stringify(text.slice(0, 120))}.`, cause: error });
  }
}
