import { AgentFlowError, readLimitedBody } from '@agentflow/core';

export type FetchFunction = typeof fetch;

/** Default cap on a search reply's body (2 MiB: a page of results or intros is tens of KiB). */
export const DEFAULT_SEARCH_RESPONSE_BYTES = 2 * 1024 * 1024;

/** Which body cap applies, and the tool setting that raises it (named in the error). */
export interface BodyLimit {
  maxBytes: number;
  setting: string;
}

/**
 * Fetches JSON, turning every failure into an AgentFlowError that names the URL: the
 * connection error, the HTTP status with the start of the body, or a body over
 * `limit.maxBytes` (RESPONSE_TOO_LARGE naming `limit.setting`; the request is aborted
 * at the first chunk over, so a flood is never held in memory).
 */
export async function fetchJson(fetchFunction: FetchFunction, url: string, init: RequestInit, limit: BodyLimit): Promise<unknown> {
  const stop = new AbortController();
  const signal = init.signal ? AbortSignal.any([init.signal, stop.signal]) : stop.signal;
  let response: Response;
  try {
    response = await fetchFunction(url, { ...init, signal });
  } catch (cause) {
    if (init.signal?.aborted) throw new AgentFlowError({ code: 'ABORTED', message: `Request to ${url} was cancelled.`, cause });
    throw new AgentFlowError({
      code: 'NETWORK_ERROR',
      message: `Could not reach ${url}: ${(cause as Error).message}${(cause as { cause?: Error }).cause ? ` (${(cause as { cause: Error }).cause.message})` : ''}`,
      cause,
      details: { url },
    });
  }
  let text: string;
  try {
    text = await readLimitedBody(response, { maxBytes: limit.maxBytes, url, setting: limit.setting });
  } catch (error) {
    stop.abort();
    if (AgentFlowError.isInstance(error)) throw error;
    if (init.signal?.aborted) throw new AgentFlowError({ code: 'ABORTED', message: `Request to ${url} was cancelled.`, cause: error });
    throw new AgentFlowError({ code: 'NETWORK_ERROR', message: `${url}: the reply broke off: ${(error as Error).message}`, cause: error, details: { url } });
  }
  if (!response.ok) {
    throw new AgentFlowError({
      code: 'HTTP_ERROR',
      message: `${url} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${text.slice(0, 300)}`,
      details: { url, status: response.status },
    });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${url} answered with invalid JSON: ${text.slice(0, 200)}`, cause, details: { url } });
  }
}

/** Text of an error for a ToolResult. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
