import { AgentFlowError, describeValue, formatZodIssues, type Step, type Trajectory, trajectorySchema } from '@agentflow/core';
import { type FlowLimits, type FlowModules, runFlowFrom } from './run-flow';

/** Limits of a continuation: those of `runFlow`, plus which tools' state to rebuild. */
export interface ContinueFlowLimits extends FlowLimits {
  /**
   * Tools whose calls in the prefix are run again, silently and in order, in the
   * continuation's fresh task before the loop goes on, so per-task state (python
   * variables) is back. Their outputs are dropped: the prefix keeps its recorded results.
   * Default `['python']`; `[]` replays nothing.
   */
  replayTools?: readonly string[];
}

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_ARGUMENT', message, details });
}

/** Steps 0..afterStep of `trajectory`, checked: a valid trajectory whose indices run 0, 1, 2... */
export function trajectoryPrefix(trajectory: Trajectory, afterStep: number): Step[] {
  const parsed = trajectorySchema.safeParse(trajectory);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `continueFlow needs a trajectory: ${formatZodIssues(parsed.error).join('; ')}`,
      cause: parsed.error,
    });
  }
  const { steps, id } = parsed.data;
  if (!Number.isInteger(afterStep) || afterStep < 0 || afterStep >= steps.length) {
    throw invalid(
      `continueFlow: afterStep must be a step index of trajectory ${id} (0 to ${steps.length - 1}), got ${describeValue(afterStep)}.`,
      { afterStep, steps: steps.length },
    );
  }
  const misplaced = steps.findIndex((step, position) => step.index !== position);
  if (misplaced !== -1 && misplaced <= afterStep) {
    throw invalid(
      `continueFlow: trajectory ${id} has step index ${steps[misplaced]?.index} at position ${misplaced}; expected indices 0, 1, 2...`,
      { position: misplaced },
    );
  }
  return steps.slice(0, afterStep + 1);
}

/**
 * Continues `trajectory` after step `afterStep`: steps 0..afterStep are kept verbatim
 * (actions, tool results, verdicts, timings; their tools are not run again) and put in
 * the agent's memory as they happened, then the loop goes on with `modules.planner`
 * until it finishes or reaches its limits. New steps are numbered from afterStep + 1;
 * `maxSteps` counts the prefix too.
 *
 * The result is a new trajectory (a fresh id unless `limits.trajectoryId`; the source's
 * `taskId` unless `limits.taskId`). Its tools run under their own task key (the new
 * trajectory id unless `limits.toolTaskId`), so continuations never share a REPL. The new
 * REPL does not hold the prefix's python variables unless python is in `replayTools`
 * (the default), which re-runs the prefix's python code there first, its output dropped;
 * code with side effects or randomness may then not reproduce the recorded state exactly.
 * A prefix that ended the run by itself (a finish action, an LLM verifier's stop) gets
 * no new steps: only the answer is written again.
 *
 * Throws an AgentFlowError for a malformed trajectory or an `afterStep` that is not one
 * of its step indices; otherwise behaves like `runFlow` (never throws for a failure inside the run).
 */
export async function continueFlow(
  trajectory: Trajectory,
  afterStep: number,
  modules: FlowModules,
  limits: ContinueFlowLimits = {},
): Promise<Trajectory> {
  const prefix = trajectoryPrefix(trajectory, afterStep);
  const { replayTools = ['python'], ...flowLimits } = limits;
  const trajectoryId = flowLimits.trajectoryId ?? crypto.randomUUID();
  const taskId = flowLimits.taskId ?? trajectory.taskId;
  return runFlowFrom(
    trajectory.question,
    modules,
    { ...flowLimits, trajectoryId, toolTaskId: flowLimits.toolTaskId ?? trajectoryId, ...(taskId === undefined ? {} : { taskId }) },
    { steps: prefix, replayTools },
  );
}
