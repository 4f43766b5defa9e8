import { AgentFlowError, describeValue } from '@agentflow/core';

export interface HttpUrlSettings {
  /** Where the text came from, named in the error: an option or config key (`--tavily-url`, `tools.mcp`). Default `URL`. */
  option?: string;
}

/**
 * Parses an http(s) URL (an MCP server's, a search API's root). Anything else (not a URL,
 * another scheme) is an INVALID_ARGUMENT naming the option and the value.
 */
export function parseHttpUrl(text: string, settings: HttpUrlSettings = {}): URL {
  const option = settings.option ?? 'URL';
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} must be an http:// or https:// URL, got ${describeValue(text)}.`,
      details: { option, value: text },
    });
  }
  return url;
}
