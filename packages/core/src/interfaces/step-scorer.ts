import type { ChatMessage } from '../schemas/chat';
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
  /**
   * The step exactly as the planner saw and wrote it: its prompt messages and raw completion.
   * Carries the same facts as the fields above, in the planner's own format, for a PRM whose
   * backbone is the planner (`input: 'chat'` in @agentflow/prm). Absent when not recorded.
   */
  prompt?: ChatMessage[];
  completion?: string;
  /**
   * The policy's log-probability of each token of the decision as it was sampled: how sure
   * the planner was of it (a PRM with `confidence` features reads it). Absent when not recorded.
   */
  completionLogprobs?: number[];
  /** The same for each `history` decision, aligned with `history`; absent unless every one was recorded. */
  historyLogprobs?: number[][];
  /**
   * What this decision's own tool returned (its output, `error: ...`, or `''` without a tool): its
   * consequence, which a PRM reads only when told to (`stepResult` in @agentflow/prm). Absent for
   * a decision that did not parse.
   */
  result?: string;
  /**
   * The planner's prompt for the next decision of the trajectory, which shows this one with its
   * result in the planner's own format (a PRM with `input: 'chat'` and `stepResult` reads it).
   * Absent for the last decision, or when not recorded.
   */
  nextPrompt?: ChatMessage[];
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

/**
 * What a PRM sees at each step of a trajectory, in order: the question, the earlier decisions
 * that parsed with what their tools returned, the decision (null for a format error), the
 * step as the planner saw and wrote it, and, apart, the decision's own result and the next
 * step's prompt (which a PRM reads only when told to).
 */
export function stepScoringInputs(trajectory: {
  question: string;
  steps: ReadonlyArray<Pick<Step, 'action' | 'toolResult' | 'prompt' | 'completion' | 'completionLogprobs'>>;
}): StepScoringInput[] {
  const history: PlannerAction[] = [];
  const observations: string[] = [];
  // Undefined from the first parsed decision without recorded log-probs on.
  let historyLogprobs: number[][] | undefined = [];
  return trajectory.steps.map((step, index) => {
    const next = trajectory.steps[index + 1];
    const input: StepScoringInput = {
      question: trajectory.question,
      history: [...history],
      observations: [...observations],
      action: step.action,
      prompt: step.prompt,
      completion: step.completion,
      ...(step.completionLogprobs === undefined ? {} : { completionLogprobs: step.completionLogprobs }),
      ...(historyLogprobs === undefined ? {} : { historyLogprobs: [...historyLogprobs] }),
      ...(step.action === null ? {} : { result: stepObservation(step) }),
      ...(next?.prompt === undefined ? {} : { nextPrompt: next.prompt }),
    };
    if (step.action !== null) {
      history.push(step.action);
      observations.push(stepObservation(step));
      historyLogprobs = step.completionLogprobs === undefined ? undefined : historyLogprobs?.concat([step.completionLogprobs]);
    }
    return input;
  });
}

