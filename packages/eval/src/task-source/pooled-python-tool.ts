import { AgentFlowError, describeValue, type Tool, type ToolContext } from '@agentflow/core';
import { createPythonTool } from '@agentflow/executor';

/**
 * Persistent python REPLs a run's tasks share when `pythonSlots` is not given. A sandbox
 * costs ~200 ms to start and a warm call under 1 ms, so a few REPLs serve thousands of
 * rollouts; 8 is what the trainer's task world has used since its first release.
 */
export const DEFAULT_PYTHON_SLOTS = 8;

/** Settings of `createPooledPythonTool`. */
export interface PooledPythonToolSettings {
  /** How many REPLs the tasks share (a positive integer). */
  slots: number;
  /** Slot ids are `${slotPrefix}${n}`, e.g. `world-python-0`; the REPL's scratch folder is named after it. */
  slotPrefix: string;
}

/** The sandboxed `python` tool with its REPLs pooled, and what to stop at the end. */
export interface PooledPythonTool {
  tool: Tool;
  /** Why python cannot run here (no bubblewrap...), or undefined when it can. */
  unavailableReason(): Promise<string | undefined>;
  /** Stops every slot's REPL. Safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Wraps `createPythonTool()` of @agentflow/executor so that each task id is assigned a slot
 * round-robin on its first call and keeps it: a task's REPL state lasts across its steps
 * while the number of sandboxes stays at `slots`. Tasks that share a slot see each other's
 * variables; the task sources' code is stateless arithmetic, so that does not matter.
 */
export function createPooledPythonTool(settings: PooledPythonToolSettings): PooledPythonTool {
  const { slots, slotPrefix } = settings;
  if (!Number.isInteger(slots) || slots < 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `pythonSlots must be a positive integer, got ${describeValue(slots)}.`,
      details: { pythonSlots: slots },
    });
  }
  const python = createPythonTool();
  const slotOf = new Map<string, string>();
  let next = 0;
  const slot = (taskId: string) => {
    let id = slotOf.get(taskId);
    if (id === undefined) {
      id = `${slotPrefix}${next++ % slots}`;
      slotOf.set(taskId, id);
    }
    return id;
  };
  const tool: Tool = {
    name: python.name,
    description: python.description,
    inputSchema: python.inputSchema,
    execute: (input, context: ToolContext) =>
      python.execute(input as Parameters<typeof python.execute>[0], { ...context, taskId: slot(context.taskId) }),
  };
  return {
    tool,
    unavailableReason: () => python.unavailableReason(),
    async dispose() {
      for (let index = 0; index < slots; index++) await python.dispose(`${slotPrefix}${index}`);
    },
  };
}
