import type { Demonstration, Tool } from '@agentflow/core';

/** The two splits every task source has: what a run trains on, and what it is judged on. */
export type TaskSplitName = 'train' | 'test';

/** One task of a source, whatever it came from (a benchmark row, a generated question). */
export interface TaskItem {
  /** Unique within the source (both splits): trajectory ids and resumes key on it. */
  id: string;
  /** What the agent is asked. */
  question: string;
  /** The reference answer, as text. */
  answer: string;
  /** Everything else the source knows (year, level, template, the benchmark row...). */
  metadata: Record<string, unknown>;
  /**
   * The planner decisions this task allows, the finish included, where the source sets a
   * budget per task (the task world with `stepSlack`). A runner passes it as the agent's
   * `maxSteps` for this task (flow's `AgentRunSettings.maxSteps`: the smaller of it and the
   * agent's own limit counts); past it a run ends without an answer. Absent: the run's own limit.
   */
  maxSteps?: number;
}

/** The tools a source's tasks need, built by the source itself (it knows its corpus). */
export interface TaskSourceTools {
  tools: Tool[];
  /** Why a tool cannot run here (no bubblewrap for python...), or undefined when all can. */
  unavailableReason(): Promise<string | undefined>;
  /** Stops what the tools started (python REPLs). Safe to call twice. */
  dispose(): Promise<void>;
}

/** Settings of `TaskSource.createTools`. */
export interface TaskSourceToolsSettings {
  /**
   * Persistent python REPLs shared by the run's tasks (a sandbox costs ~200 ms to start, a
   * warm call under 1 ms); tasks are assigned to REPLs round-robin by task id. Default 8
   * (`DEFAULT_PYTHON_SLOTS`) in the built-in sources.
   */
  pythonSlots?: number;
}

/**
 * Where a training run's tasks come from: named splits, the reward of an answer, the tools
 * its tasks need and, optionally, expert demonstrations. Benchmark datasets
 * (`createDatasetTaskSource`) and the generated task world (`createWorldTaskSource`) are
 * the two kinds; a user's own is one more object of this shape. No pipeline stage knows
 * which kind it runs on.
 */
export interface TaskSource {
  /** `datasets`, `world`, or a user's own name. */
  readonly kind: string;
  /** One line for logs and the dry run, e.g. `aime_1983_2024.csv 1983-2023 (918) / aime24.json (30)`. */
  readonly description: string;
  /** The items of a split, in a stable order. */
  split(name: TaskSplitName): readonly TaskItem[];
  /** The item of an id (either split); a NOT_FOUND AgentFlowError naming the id otherwise. */
  item(id: string): TaskItem;
  /**
   * The reward of an agent's final answer to `item`: 1 when it is right, 0 otherwise. Never
   * throws on a malformed or missing answer (that is simply 0).
   */
  reward(item: TaskItem, answer: string | undefined): Promise<number>;
  /** Builds the tools the tasks need (each call its own REPLs). */
  createTools(settings?: TaskSourceToolsSettings): TaskSourceTools;
  /**
   * A teacher's actions for an item, ending with `finish`, and whether they are exact, where
   * the source has them (the task world does, from its exact expert or an imperfect teacher;
   * benchmark files do not). The same item always gets the same demonstration. The warm start
   * replays them through the real agent loop (`@agentflow/flow`'s `demonstrationSamples`), so
   * each step's prompt shows the real tool outputs.
   */
  demonstration?(item: TaskItem): Demonstration | undefined;
  /**
   * What makes two items the same task, when the source knows it better than their text does
   * (the task world: template and entities). With it the leakage guard compares these keys
   * exactly; without it, it looks for near-duplicate question text.
   */
  leakageKey?(item: TaskItem): string;
  /** Releases what `reward` started (a sympy process). Safe to call twice. */
  dispose?(): Promise<void>;
}
