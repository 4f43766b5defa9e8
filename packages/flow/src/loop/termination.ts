import { assertNever, type Termination, type VerdictReason } from '@agentflow/core';

/** How a stopping verdict ends the trajectory; `error` carries the reason for non-answers. */
export function terminationOf(reason: VerdictReason): { termination: Termination; error?: string } {
  switch (reason) {
    case 'finish_action':
    case 'llm_stop':
      return { termination: 'finished' };
    case 'max_steps':
      return { termination: 'max_steps' };
    case 'timeout':
      return { termination: 'timeout' };
    case 'repeated_action':
      return { termination: 'error', error: 'Stopped: the planner repeated the same action with the same input.' };
    case 'tool_error_streak':
      return { termination: 'error', error: 'Stopped: too many tool errors in a row.' };
    case 'continue':
      return { termination: 'error', error: 'Internal: a "continue" verdict cannot end the loop.' };
    default:
      return assertNever(reason, 'verdict reason');
  }
}
