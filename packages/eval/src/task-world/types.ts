import type { PlannerAction } from '@agentflow/core';

/** The tool that looks facts up (BM25 over the corpus), input `{"query": string}`. */
export const TASK_WORLD_SEARCH_TOOL = 'corpus_search';
/** The tool that computes, input `{"code": string}`; its output is the printed value. */
export const TASK_WORLD_PYTHON_TOOL = 'python';

/** One corpus document; a JSONL line of the corpus file. */
export interface TaskWorldDocument {
  id: string;
  title: string;
  text: string;
}

export type TaskWorldSplit = 'train' | 'test';
export type TaskWorldLevel = 1 | 2 | 3;

/** One question of the world. */
export interface TaskWorldTask {
  id: string;
  question: string;
  /** A small non-negative integer, as text. */
  answer: string;
  split: TaskWorldSplit;
  /** Lookups needed: 1 (one entity), 2 (two entities), 3 (three entities). */
  level: TaskWorldLevel;
  /** Template id, e.g. `sum1`, `diff2`. */
  template: string;
  /** Entity names in the order the expert looks them up. */
  entities: string[];
  /**
   * Planner decisions this task allows, the finish included: its exact expert's plus the
   * world's `stepSlack`. Present only when `stepSlack` is set; past it a run ends unanswered.
   */
  maxSteps?: number;
}

/** One expert step: the action, and what the tool returns in a correct run (absent for `finish`). */
export interface TaskWorldDemonstrationStep {
  action: PlannerAction;
  observation?: string;
}

/** The expert trajectory for one task: searches (each stale result followed by its check), one python call, finish. */
export interface TaskWorldDemonstration {
  taskId: string;
  question: string;
  answer: string;
  steps: TaskWorldDemonstrationStep[];
}
