import { AgentFlowError, describeValue, type Trajectory } from '@agentflow/core';

/** The planner steps of the trajectories to label, and what a message needs to say when they are of no use. */
export interface CollectedSteps {
  trajectories: number;
  steps: number;
  /** Steps whose completion did not parse as an action: labelled 0 by rule, never learnt from. */
  formatErrors: number;
  /** Format errors whose completion hit the token limit (`Step.truncated`). */
  truncated: number;
  /** How the trajectories ended (finished, max_steps, timeout, error), each once. */
  endings: string[];
  /** The first trajectory error, the first parse error and the first unparsed completion, when there are. */
  firstError?: string;
  firstParseError?: string;
  firstCompletion?: string;
}

/** Counts the planner steps of `trajectories` and their format errors, keeping the first error of each kind to quote. */
export function collectedSteps(trajectories: readonly Trajectory[]): CollectedSteps {
  const steps = trajectories.flatMap((trajectory) => trajectory.steps);
  const unparsed = steps.filter((step) => step.action === null);
  const firstError = trajectories.find((trajectory) => trajectory.error)?.error;
  const firstParseError = unparsed.find((step) => step.parseError)?.parseError;
  const firstCompletion = unparsed[0]?.completion;
  return {
    trajectories: trajectories.length,
    steps: steps.length,
    formatErrors: unparsed.length,
    truncated: unparsed.filter((step) => step.truncated === true).length,
    endings: [...new Set(trajectories.map((trajectory) => trajectory.termination))],
    ...(firstError === undefined ? {} : { firstError }),
    ...(firstParseError === undefined ? {} : { firstParseError }),
    ...(firstCompletion === undefined ? {} : { firstCompletion }),
  };
}

/**
 * What the nothing-collected error names besides the counts: where the trajectories came from
 * and what to look at, in the caller's words (the settings are the caller's, this package knows
 * no config).
 */
export interface CollectedStepsAdvice {
  /** Who collected the trajectories, e.g. `the collect stage`. */
  collector: string;
  /** The file the trajectories were read from. */
  trajectoriesPath: string;
  /** The completions' token limit, the setting's name and its value: a truncated format error stopped there. */
  maxNewTokens: { setting: string; value: number };
  /** What to check when no trajectory has a planner step, e.g. `the planner (policy.model), policy.maxSteps and the task source`. */
  noSteps: string;
  /** What to check when every step is a format error, e.g. `the planner (policy.model) and its prompt (policy.prompt)`. */
  formatErrors: string;
  /** The way around labels, after what to check, e.g. `or use train.credit kind outcome, which needs no labels`. */
  otherwise: string;
}

/**
 * Why the collected trajectories give a PRM nothing to learn from (no planner step, or only
 * format errors, which the PRM skips), naming what `advice` says to look at; undefined when
 * they do. `stage` prefixes the message (`label`, `train-prm`).
 */
export function nothingCollectedError(stage: string, collected: CollectedSteps, advice: CollectedStepsAdvice): AgentFlowError | undefined {
  const limit = advice.maxNewTokens;
  if (collected.steps === 0) {
    const endings = collected.endings.length ? `, ended by ${collected.endings.join(', ')}` : '';
    const first = collected.firstError === undefined ? '' : ` The first trajectory's error: ${describeValue(collected.firstError, 200)}.`;
    return new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `${stage}: ${advice.collector} yielded no planner steps to label (${collected.trajectories} trajectories in ${advice.trajectoriesPath}${endings}); the PRM would have nothing to learn from.${first} Check ${advice.noSteps}, ${advice.otherwise}.`,
      details: { reason: 'no-steps', trajectories: collected.trajectories },
    });
  }
  if (collected.formatErrors < collected.steps) return undefined;
  const truncated =
    collected.truncated > 0
      ? `${collected.truncated} of them stopped at ${limit.setting} (${limit.value} tokens): raise it.`
      : `None stopped at ${limit.setting} (${limit.value} tokens).`;
  const parseError = collected.firstParseError === undefined ? '' : ` The first parse error: ${describeValue(collected.firstParseError, 200)}.`;
  const completion = collected.firstCompletion === undefined ? '' : ` A completion: ${describeValue(collected.firstCompletion, 200)}.`;
  return new AgentFlowError({
    code: 'RUNTIME_ERROR',
    message: `${stage}: every one of the ${collected.steps} planner step${collected.steps === 1 ? '' : 's'} in ${advice.trajectoriesPath} is a format error (its completion did not parse as an action), and the PRM skips format errors: it would have nothing to learn from. ${truncated}${parseError}${completion} Check ${advice.formatErrors}, ${advice.otherwise}.`,
    details: { reason: 'format-errors', steps: collected.steps, truncated: collected.truncated },
  });
}
