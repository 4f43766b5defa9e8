import type { ChatMessage } from '@agentflow/core';
import type { ToolCatalogueEntry } from '../catalogue/tool-catalogue';

/**
 * What the planner needs of the in-task memory: a rendering within a character budget.
 * `@agentflow/memory`'s in-task memory satisfies it; the planner does not depend on it.
 */
export interface PlannerMemoryView {
  render(settings: { budgetChars: number; style: 'full' | 'compact'; emptyText?: string; maxOutputChars?: number }): string;
}

/** Everything a template may put in the prompt of one step. */
export interface PromptContext {
  question: string;
  tools: readonly ToolCatalogueEntry[];
  memory: PlannerMemoryView;
  /** Solved examples retrieved from cross-task memory, already rendered. */
  examples?: string;
  /** 0-based index of the step being decided. */
  stepIndex: number;
  maxSteps?: number;
}

/** Turns a step's context into the exact messages sent to the planner model. */
export interface PromptTemplate {
  readonly name: string;
  render(context: PromptContext): ChatMessage[];
}
