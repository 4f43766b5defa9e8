import { FINISH_ACTION, type Trajectory } from '@agentflow/core';

export interface TrajectoryStats {
  trajectories: number;
  /** Planner steps per task. */
  meanSteps: number;
  /** Steps whose action named a tool (not `finish`, not a format error) per task. */
  meanToolCalls: number;
  /** Steps whose completion did not parse as an action, over all steps. */
  formatErrorRate: number;
  /** Tasks with at least one format error, over all tasks. */
  tasksWithFormatError: number;
  /** Tool calls that returned an error, over all tool calls. */
  toolErrorRate: number;
  /** Share of trajectories per termination reason. */
  terminations: Record<Trajectory['termination'], number>;
}

/** Steps, tool calls and format errors over a set of trajectories (core `Trajectory`). */
export function trajectoryStats(trajectories: readonly Trajectory[]): TrajectoryStats {
  let steps = 0;
  let toolCalls = 0;
  let toolErrors = 0;
  let formatErrors = 0;
  let tasksWithFormatError = 0;
  const terminations: Record<Trajectory['termination'], number> = { finished: 0, max_steps: 0, timeout: 0, error: 0 };
  for (const trajectory of trajectories) {
    steps += trajectory.steps.length;
    let hadFormatError = false;
    for (const step of trajectory.steps) {
      if (step.action === null) {
        formatErrors++;
        hadFormatError = true;
      } else if (step.action.action !== FINISH_ACTION) {
        toolCalls++;
        if (step.toolResult?.error !== undefined) toolErrors++;
      }
    }
    if (hadFormatError) tasksWithFormatError++;
    terminations[trajectory.termination]++;
  }
  const count = trajectories.length;
  const share = (value: number, of: number) => (of === 0 ? 0 : value / of);
  return {
    trajectories: count,
    meanSteps: share(steps, count),
    meanToolCalls: share(toolCalls, count),
    formatErrorRate: share(formatErrors, steps),
    tasksWithFormatError: share(tasksWithFormatError, count),
    toolErrorRate: share(toolErrors, toolCalls),
    terminations: {
      finished: share(terminations.finished, count),
      max_steps: share(terminations.max_steps, count),
      timeout: share(terminations.timeout, count),
      error: share(terminations.error, count),
    },
  };
}
