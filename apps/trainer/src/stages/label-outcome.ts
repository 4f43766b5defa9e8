import { AgentFlowError, assertNever, describeValue, type Trajectory } from '@agentflow/core';
import type { LabelFailure } from '@agentflow/prm';

/** The planner steps of the trajectories to label, and what a stage needs to say when they are of no use. */
export interface CollectedSteps {
  trajectories: number;
  steps: number;
  /** Steps whose completion did not parse as an action: labelled 0 by rule, never learnt from. */
  formatErrors: number;
  /** Format errors whose completion hit the token limit (`policy.maxNewTokens`). */
  truncated: number;
  /** How the trajectories ended (finished, max_steps, timeout, error), each once. */
  endings: string[];
  /** The first trajectory error, the first parse error and the first unparsed completion, when there are. */
  firstError?: string;
  firstParseError?: string;
  firstCompletion?: string;
}

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

const stepCount = (count: number) => `${count} step${count === 1 ? '' : 's'}`;

const OUTCOME_CREDIT = 'or use train.credit kind outcome, which needs no labels';

/**
 * Why the collected trajectories give a PRM nothing to learn from (no planner step, or only
 * format errors, which the PRM skips), naming the settings to look at; undefined when they do.
 * `stage` prefixes the message (`label`, `train-prm`).
 */
export function nothingCollectedError(
  stage: string,
  collected: CollectedSteps,
  where: { trajectoriesPath: string; maxNewTokens: number },
): AgentFlowError | undefined {
  if (collected.steps === 0) {
    const endings = collected.endings.length ? `, ended by ${collected.endings.join(', ')}` : '';
    const first = collected.firstError === undefined ? '' : ` The first trajectory's error: ${describeValue(collected.firstError, 200)}.`;
    return new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `${stage}: the collect stage yielded no planner steps to label (${collected.trajectories} trajectories in ${where.trajectoriesPath}${endings}); the PRM would have nothing to learn from.${first} Check the planner (policy.model), policy.maxSteps and the task source, ${OUTCOME_CREDIT}.`,
      details: { reason: 'no-steps', trajectories: collected.trajectories },
    });
  }
  if (collected.formatErrors < collected.steps) return undefined;
  const truncated =
    collected.truncated > 0
      ? `${collected.truncated} of them stopped at policy.maxNewTokens (${where.maxNewTokens} tokens): raise it.`
      : `None stopped at policy.maxNewTokens (${where.maxNewTokens} tokens).`;
  const parseError = collected.firstParseError === undefined ? '' : ` The first parse error: ${describeValue(collected.firstParseError, 200)}.`;
  const completion = collected.firstCompletion === undefined ? '' : ` A completion: ${describeValue(collected.firstCompletion, 200)}.`;
  return new AgentFlowError({
    code: 'RUNTIME_ERROR',
    message: `${stage}: every one of the ${collected.steps} planner step${collected.steps === 1 ? '' : 's'} in ${where.trajectoriesPath} is a format error (its completion did not parse as an action), and the PRM skips format errors: it would have nothing to learn from. ${truncated}${parseError}${completion} Check the planner (policy.model) and its prompt (policy.prompt), ${OUTCOME_CREDIT}.`,
    details: { reason: 'format-errors', steps: collected.steps, truncated: collected.truncated },
  });
}

/** Who labelled, as the messages name it; a judge with the setting that names it (`label.endpoint`, `--endpoint`). */
export type LabellerDescription =
  | { kind: 'judge'; model: string; url: string; setting: string }
  | { kind: 'monte-carlo'; samples: number };

/**
 * The error of a labeller that labelled none of the steps it was given (every judge reply
 * unusable, every Monte-Carlo completion failing): who, how many steps, the first failure
 * (for a judge, its reply), the setting to change, and `then`, what to do after.
 */
export function nothingLabelledError(stage: string, labeller: LabellerDescription, failures: readonly LabelFailure[], then: string): AgentFlowError {
  const first = failures[0] === undefined ? '' : ` The first: ${failures[0].error.replace(/\.$/, '')}.`;
  const details = { reason: 'nothing-labelled', labeller: labeller.kind, steps: failures.length, failures: failures.slice(0, 5) };
  switch (labeller.kind) {
    case 'judge':
      return new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `${stage}: the judge ${labeller.model} at ${labeller.url} gave no usable reply for any of ${stepCount(failures.length)}.${first} Point ${labeller.setting} at a judge that answers {"score": 0..1, "rationale": "..."}, then ${then}.`,
        details: { ...details, judge: labeller.model, url: labeller.url },
      });
    case 'monte-carlo':
      return new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `${stage}: Monte-Carlo labelling (label.samples ${labeller.samples} completions per step with the warm-started planner) labelled none of ${stepCount(failures.length)}.${first} Check what the completions call (fixedModules, the tools), or label with a judge (label.kind judge), then ${then}.`,
        details,
      });
    default:
      return assertNever(labeller, 'labeller');
  }
}
