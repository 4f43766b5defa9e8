import type { PlannerAction } from '../schemas/planner-action';
import type { Step } from '../schemas/step';

/**
 * What a process reward model sees of one decision: the question, the decisions before
 * it with what their tools returned, and the decision itself. Never the tool's result for
 * that decision: the PRM judges the decision, not its consequence.
 */
export interface StepScoringInput {
  question: string;
  history: PlannerAction[];
  /**
   * What the tool of each `history` decision returned (its output, or `error: ...`), aligned
   * with `history`; `''` for a decision without a tool (finish). Absent when not recorded. A
   * python step is only judged right or wrong against the facts the searches before it found.
   */
  observations?: string[];
  /** The decision to score, or null when the planner output did not parse. */
  action: PlannerAction | null;
}

/** The PRM as the trainer sees it. Scores are in [0, 1]; a null action scores 0. */
export interface StepScorer {
  score(inputs: StepScoringInput[]): Promise<number[]>;
}

/** The observation of a step as a PRM sees it in a later step's history: output, error, or ''. */
export function stepObservation(step: Pick<Step, 'toolResult'>): string {
  const result = step.toolResult;
  if (result === undefined) return '';
  return result.error === undefined ? result.output : `error: ${result.error}`;
}
