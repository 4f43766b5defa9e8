import type { ToolResult } from '@agentflow/core';

/**
 * Starts the clock of one tool call; the returned function builds its ToolResult with the
 * elapsed time and, when given, the error.
 */
export function startToolResult(now: () => number = () => performance.now()): (output: string, error?: string) => ToolResult {
  const started = now();
  return (output, error) => ({
    output,
    truncated: false,
    durationMs: now() - started,
    ...(error === undefined ? {} : { error }),
  });
}
