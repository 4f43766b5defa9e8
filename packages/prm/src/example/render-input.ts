import type { PlannerAction, StepScoringInput } from '@agentflow/core';

/**
 * Renders what the PRM sees of one decision as plain text: the question, the earlier
 * decisions, then the decision to score last (so that the last token, whose hidden state
 * the head reads, sits right after it). It takes a `StepScoringInput`, which has no field
 * for tool output: no tool result, of this step or an earlier one, can reach the PRM.
 */
export function renderStepInput(input: StepScoringInput): string {
  const lines = [`Question: ${input.question.trim()}`, ''];
  if (input.history.length === 0) {
    lines.push('Previous decisions: none');
  } else {
    lines.push('Previous decisions:');
    input.history.forEach((action, index) => {
      lines.push(`${index + 1}. ${renderAction(action)}`);
    });
  }
  lines.push('', 'Decision to score:');
  lines.push(input.action === null ? '(format error: the planner output did not parse)' : renderAction(input.action));
  return lines.join('\n');
}

function renderAction(action: PlannerAction): string {
  const actionInput = typeof action.action_input === 'string' ? action.action_input : JSON.stringify(action.action_input);
  return `thought: ${action.thought.trim()} | action: ${action.action} | input: ${actionInput}`;
}
