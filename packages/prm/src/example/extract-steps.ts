import { AgentFlowError, formatZodIssues, type PlannerAction, type Trajectory, trajectorySchema } from '@agentflow/core';
import type { PrmStep } from './prm-example';

/**
 * Turns a trajectory into one PRM step per planner decision. The history of step j is
 * the parsed actions of steps 0..j-1 (format errors have no action and are left out);
 * tool results and verdicts are dropped on purpose: the PRM judges decisions.
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
  const history: PlannerAction[] = [];
  const steps: PrmStep[] = [];
  for (const step of parsed.steps) {
    steps.push({
      id: `${parsed.id}:${step.index}`,
      trajectoryId: parsed.id,
      ...(parsed.taskId === undefined ? {} : { taskId: parsed.taskId }),
      stepIndex: step.index,
      question: parsed.question,
      history: [...history],
      action: step.action,
      ...(parsed.outcomeReward === undefined ? {} : { outcomeReward: parsed.outcomeReward }),
    });
    if (step.action) history.push(step.action);
  }
  return steps;
}
