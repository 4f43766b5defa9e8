import type { Step } from '@agentflow/core';
import type { MemoryEntry } from '@agentflow/memory';

/**
 * What the in-task memory keeps of a step. One function for live steps and for a
 * continued prefix, so a continuation's planner sees the prefix exactly as the original
 * run's planner did.
 */
export function memoryEntryOf(step: Step): MemoryEntry {
  const { action, toolResult } = step;
  return {
    index: step.index,
    thought: action?.thought ?? '',
    action: action?.action ?? null,
    actionInput: action?.action_input ?? null,
    ...(step.parseError === undefined ? {} : { parseError: step.parseError }),
    ...(toolResult ? { toolOutput: toolResult.output } : {}),
    ...(toolResult?.error === undefined ? {} : { toolError: toolResult.error }),
  };
}
