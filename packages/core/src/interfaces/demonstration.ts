import type { PlannerAction } from '../schemas/planner-action';

/**
 * A teacher's demonstration of one task: the planner actions, ending with `finish`, that a
 * supervised warm start replays through the real agent loop (so each step's prompt shows the
 * real tool outputs), and whether they are meant to be right. A task source offers them
 * (`@agentflow/eval`'s `TaskSource.demonstration`); `@agentflow/flow`'s `demonstrationSamples`
 * replays them.
 */
export interface Demonstration {
  actions: PlannerAction[];
  /** True for an exact expert: its replay must reach the reference answer, or the source and its tools disagree. False for a flawed one (an imperfect teacher's mistake). */
  exact: boolean;
}
