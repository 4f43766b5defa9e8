import { AgentFlowError, formatZodIssues, stepScoringInputs, type Trajectory, trajectorySchema } from '@agentflow/core';
import type { PrmStep } from './prm-example';

/**
 * Turns a trajectory into one PRM step per planner decision. The history of step j is
 * the parsed actions of steps 0..j-1 (format errors have no action and are left out) with
 * what their tools returned; step j's own result and the next step's prompt are kept apart
 * (`result`, `nextPrompt`), read only by a PRM with `stepResult`; verdicts are left out.
 */
export function extractSteps(trajectory: Trajectory): PrmStep[] {
  const result = trajectorySchema.safeParse(trajectory);
  if (!result.success) {
    const id = (trajectory as { id?: unknown } | null)?.id;
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `Not a trajectory${typeof id === 'string' ? ` (${id})` : ''}: ${formatZodIssues(result.error).join('; ')}`,
      cause: result.error,
    });
  }
  const parsed = result.data;
  const steps: PrmStep[] = stepScoringInputs(parsed).map((input, index) => {
    const step = parsed.steps[index]!;
    return {
      id: `${parsed.id}:${step.index}`,
      trajectoryId: parsed.id,
      ...(parsed.taskId === undefined ? {} : { taskId: parsed.taskId }),
      stepIndex: step.index,
      ...input,
      ...(parsed.outcomeReward === undefined ? {} : { outcomeReward: parsed.outcomeReward }),
    };
  });
  return steps;
}
