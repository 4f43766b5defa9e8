import type { PlannerAction, StepScoringInput } from '@agentflow/core';

/** Longest observation shown per earlier decision; longer ones keep their start and end. */
const MAX_OBSERVATION_CHARS = 240;

/**
 * Renders what the PRM sees of one decision as plain text: the question, the earlier
 * decisions each with what its tool returned (on one line, cut in the middle when long),
 * then the decision to score last (so that the last token, whose hidden state the head
 * reads, sits right after it). With `stepResult`, the decision's own result follows it, as
 * the earlier ones' do; otherwise it never appears.
 */
export function renderStepInput(input: StepScoringInput, settings: { stepResult?: boolean } = {}): string {
  const lines = [`Question: ${input.question.trim()}`, ''];
  if (input.history.length === 0) {
    lines.push('Previous decisions: none');
  } else {
    lines.push('Previous decisions:');
    input.history.forEach((action, index) => {
      const observation = input.observations?.[index];
      lines.push(`${index + 1}. ${renderAction(action)}${observation ? ` -> ${renderObservation(observation)}` : ''}`);
    });
  }
  lines.push('', 'Decision to score:');
  if (input.action === null) {
    lines.push('(format error: the planner output did not parse)');
  } else {
    const result = settings.stepResult ? input.result : undefined;
    lines.push(`${renderAction(input.action)}${result ? ` -> ${renderObservation(result)}` : ''}`);
  }
  return lines.join('\n');
}

function renderAction(action: PlannerAction): string {
  const actionInput = typeof action.action_input === 'string' ? action.action_input : JSON.stringify(action.action_input);
  return `thought: ${action.thought.trim()} | action: ${action.action} | input: ${actionInput}`;
}

function renderObservation(observation: string): string {
  const line = observation.trim().replace(/\s*\n\s*/g, ' | ');
  if (line.length <= MAX_OBSERVATION_CHARS) return line;
  const half = Math.floor((MAX_OBSERVATION_CHARS - 5) / 2);
  return `${line.slice(0, half)} ... ${line.slice(line.length - half)}`;
}
