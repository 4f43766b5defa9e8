import type { PlannerAction } from '../schemas/planner-action';

/**
 * What a process reward model sees of one decision: the question, the decisions before
 * it, and the decision itself. Never the tool's result for that decision.
 */
export interface StepScoringInput {
  question: string;
  history: PlannerAction[];
  /** The decision to score, or null when the planner output did not parse. */
  action: PlannerAction | null;
}

/** The PRM as the trainer sees it. Scores are in [0, 1]; a null action scores 0. */
export interface StepScorer {
  score(inputs: StepScoringInput[]): Promise<number[]>;
}
