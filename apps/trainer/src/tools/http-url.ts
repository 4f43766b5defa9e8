import { AgentFlowError, describeValue } from '@agentflow/core';

/** Parses an http(s) URL option, naming the option when the value is not one. */
export function parseHttpUrl(option: string, text: string): URL {
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
