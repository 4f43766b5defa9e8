import type { MemoryStore, Trajectory } from '@agentflow/core';
import { createExampleRetriever, type Embedder, type ExampleRetrievalConfig, renderExamples } from '@agentflow/memory';

export interface CrossTaskMemorySettings extends ExampleRetrievalConfig {
  /** Where solved tasks are kept: `createSqliteMemoryStore` (embedded) or `createQdrantMemoryStore`. */
  store: MemoryStore;
  /** Embeds questions for the vector and hybrid modes (bm25, the default, needs none). */
  embedder?: Embedder;
  /** Character budget of the rendered examples in the prompt. Default 3000 (the full template's). */
  budgetChars?: number;
  /** Characters of each tool result kept in a stored trajectory. Default 200. */
  resultChars?: number;
}

/** Solved tasks kept across tasks and shown to the planner as examples. */
export interface CrossTaskMemory {
  /**
   * The k most similar solved tasks, rendered for the planner's prompt ('' when none).
   * `excludeTaskId` leaves out records of that task (an evaluation's other samples of the same
   * item must not see its solution).
   */
  examplesFor(question: string, settings?: { excludeTaskId?: string }): Promise<string>;
  /**
   * Keeps a trajectory when its outcome reward is at least 1 (a solved task); returns whether
   * it was kept. Its id is the trajectory's, so keeping one twice replaces it.
   */
  remember(trajectory: Trajectory, outcome: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Records fetched beyond k, to leave k after excluding one task's own records. */
const EXCLUSION_MARGIN = 8;

/** One line per decision: the action with its input, and what its tool returned (cut). */
export function renderTrajectoryForMemory(trajectory: Trajectory, resultChars = 200): string {
  return trajectory.steps
    .flatMap((step) => {
      if (!step.action) return [];
      const input = typeof step.action.action_input === 'string' ? step.action.action_input : JSON.stringify(step.action.action_input);
      const result = step.toolResult?.output ?? step.toolResult?.error;
      const shown = result === undefined ? '' : ` -> ${result.trim().slice(0, resultChars)}`;
      return [`${step.action.action} ${input}${shown}`];
    })
    .join('; ');
}

/**
 * Cross-task memory for the agent loop (the AgentFlow paper's Memory across tasks): before a
 * run, the planner's prompt gets the solved tasks most similar to the question
 * (`@agentflow/memory`'s retriever: BM25 by default, vector or hybrid with an embedder);
 * after a run whose outcome is right, the task is stored. Pass `examplesFor(question)` as
 * `runFlow`'s `examples`.
 */
export function createCrossTaskMemory(settings: CrossTaskMemorySettings): CrossTaskMemory {
  const { store, embedder, budgetChars = 3000, resultChars = 200, ...retrieval } = settings;
  const k = retrieval.k ?? 3;
  // Fetched beyond k so that excluded records (the same task's) still leave k to show.
  const retrieve = createExampleRetriever({ store, ...retrieval, k: k + EXCLUSION_MARGIN, ...(embedder ? { embedder } : {}) });
  return {
    async examplesFor(question, options = {}) {
      const records = (await retrieve(question)).filter((record) => options.excludeTaskId === undefined || record.metadata?.taskId !== options.excludeTaskId);
      return renderExamples(records.slice(0, k), budgetChars);
    },
    async remember(trajectory, outcome) {
      if (outcome < 1 || trajectory.answer === null) return false;
      const [embedding] = embedder && retrieval.mode !== 'bm25' ? await embedder.embed([trajectory.question]) : [undefined];
      await store.add([
        {
          id: trajectory.id,
          question: trajectory.question,
          trajectory: renderTrajectoryForMemory(trajectory, resultChars),
          answer: trajectory.answer,
          outcome,
          ...(embedding ? { embedding } : {}),
          ...(trajectory.taskId ? { metadata: { taskId: trajectory.taskId } } : {}),
          createdAt: new Date().toISOString(),
        },
      ]);
      return true;
    },
    close: () => store.close(),
  };
}
