import type { Tool } from '@agentflow/core';
import { createToolRegistry, type ToolRegistry } from '@agentflow/executor';

/** Where the loop's tools come from: plain core `Tool`s, or a prepared executor registry. */
export interface FlowToolSource {
  /** Core tools; the loop wraps them in an executor registry for the run and disposes the run's task state. */
  tools?: readonly Tool[];
  /** A prepared registry (its own timeout and output limit); the caller owns it and disposes it. */
  registry?: ToolRegistry;
}

/**
 * The registry a run executes through, and whether the run owns it. Tools are run only
 * through `@agentflow/executor`'s registry: validation, input coercion, timeouts, the
 * output limit and the never-throw contract live there alone.
 */
export function flowToolRegistry(
  source: FlowToolSource,
  settings: { timeoutMs?: number; now?: () => number },
): { registry: ToolRegistry; owned: boolean } {
  if (source.registry) return { registry: source.registry, owned: false };
  const registry = createToolRegistry({
    tools: [...(source.tools ?? [])] as Tool<unknown>[],
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.now ? { now: settings.now } : {}),
  });
  return { registry, owned: true };
}
