import type { ChatMessage } from '@agentflow/core';

/** Bumped whenever the prompt changes, so cached labels from an older prompt are not reused. */
export const JUDGE_PROMPT_VERSION = 2;

const SYSTEM_PROMPT = [
  'You grade single decisions of a tool-using agent that answers questions step by step.',
  'You see the question, the decisions the agent made before with what their tools returned (after ->), and the decision to grade.',
  'You do not see the result of the decision to grade: grade the decision itself, given what came before.',
  'Score in [0, 1] how likely this decision is a correct, useful step towards the right answer:',
  '1 = clearly right and useful; 0.5 = plausible but doubtful or redundant; 0 = wrong, harmful or pointless.',
  'Reply with JSON only: {"score": <number in [0, 1]>, "rationale": "<one or two sentences>"}.',
].join('\n');

/** The messages sent to the judge for one rendered step. */
export function judgeMessages(renderedStep: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: renderedStep },
  ];
}
