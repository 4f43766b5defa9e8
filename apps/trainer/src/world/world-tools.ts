import type { Tool, ToolContext } from '@agentflow/core';
import { createCorpusSearchTool, createPythonTool } from '@agentflow/executor';
import type { TaskWorld } from '@agentflow/eval';

export interface WorldToolsSettings {
  /**
   * Persistent Python REPLs shared by the run's tasks. A sandbox costs ~200 ms to start and a
   * warm call under 1 ms; the world's code is stateless arithmetic, so thousands of rollouts
   * share a few REPLs instead of starting one each.
   */
  pythonSlots: number;
}

export interface WorldTools {
  tools: Tool[];
  /** Why the python tool cannot run here (no bubblewrap...), or undefined when it can. */
  unavailableReason(): Promise<string | undefined>;
  dispose(): Promise<void>;
}

/** The real tools of the task world: BM25 over its corpus, and the sandboxed Python REPL. */
export function createWorldTools(world: TaskWorld, settings: WorldToolsSettings): WorldTools {
  const corpus = createCorpusSearchTool({ documents: world.corpus, defaultK: 1, maxTextChars: 120, hitHeader: 'title' });
  const python = createPythonTool();
  const slotOf = new Map<string, string>();
  let next = 0;
  const slot = (taskId: string) => {
    let id = slotOf.get(taskId);
    if (id === undefined) {
      id = `world-python-${next++ % settings.pythonSlots}`;
      slotOf.set(taskId, id);
    }
    return id;
  };
  const pooledPython: Tool = {
    name: python.name,
    description: python.description,
    inputSchema: python.inputSchema,
    execute: (input, context: ToolContext) =>
      python.execute(input as Parameters<typeof python.execute>[0], { ...context, taskId: slot(context.taskId) }),
  };
  return {
    tools: [corpus as Tool, pooledPython],
    unavailableReason: () => python.unavailableReason(),
    async dispose() {
      for (let i = 0; i < settings.pythonSlots; i++) await python.dispose?.(`world-python-${i}`);
    },
  };
}
