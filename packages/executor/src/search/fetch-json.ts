import { AgentFlowError } from '@agentflow/core';

export type FetchFunction = typeof fetch;

/**
 * Fetches JSON, turning every failure into an AgentFlowError that names the URL: the
 * connection error, or the HTTP status with the start of the body.
 */
export async function fetchJson(fetchFunction: FetchFunction, url: string, init: RequestInit): Promise<unknown> {
  let response: Response;
  try {
    response = await fetchFunction(url, init);
  } catch (cause) {
    if (init.signal?.aborted) throw new AgentFlowError({ code: 'ABORTED', message: `Request to ${url} was cancelled.`, cause });
    throw new AgentFlowError({
      code: 'NETWORK_ERROR',
      message: `Could not reach ${url}: ${(cause as Error).message}${(cause as { cause?: Error }).cause ? ` (${(cause as { cause: Error }).cause.message})` : ''}`,
      cause,
      details: { url },
    });
  }
  const text = await response.text();
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
