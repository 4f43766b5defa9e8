import { AgentFlowError } from '@agentflow/core';

/**
 * Maps step advantages onto the planner's completion tokens. Each step of a trajectory
 * is its own completion, so every token of step j carries step j's advantage.
 * Returns [steps][tokens_j].
 */
export function expandStepAdvantages(
  stepAdvantages: ArrayLike<number>,
  completionLengths: ArrayLike<number>,
): Float64Array[] {
  if (stepAdvantages.length !== completionLengths.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Got ${stepAdvantages.length} step advantages for ${completionLengths.length} completions.`,
    });
  }
  const rows: Float64Array[] = [];
  for (let step = 0; step < stepAdvantages.length; step++) {
    const length = completionLengths[step] as number;
    if (!Number.isInteger(length) || length < 0) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Completion length of step ${step} must be a non-negative integer, got ${length}.`,
      });
    }
    rows.push(new Float64Array(length).fill(stepAdvantages[step] as number));
  }
  return rows;
}
