import { AgentFlowError, assertNever } from '@agentflow/core';
import type { LabelFailure } from './label-result';

/** A judge as the messages name it: its model, where it answers, and the caller's setting that names it (`label.endpoint`, `--endpoint`). */
export interface JudgeDescription {
  model: string;
  url: string;
  setting: string;
}

/**
 * Monte-Carlo labelling as the messages name it, in the caller's words: the setting that holds
 * `samples` (`label.samples`), what completes the steps (`the warm-started planner`) and what
 * to check when no step gets a label.
 */
export interface MonteCarloDescription {
  samples: number;
  setting: string;
  completer: string;
  check: string;
}

/** Who labelled, as the messages name it. */
export type LabellerDescription = ({ kind: 'judge' } & JudgeDescription) | ({ kind: 'monte-carlo' } & MonteCarloDescription);

const stepCount = (count: number) => `${count} step${count === 1 ? '' : 's'}`;

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
        message: `${stage}: Monte-Carlo labelling (${labeller.setting} ${labeller.samples} completions per step with ${labeller.completer}) labelled none of ${stepCount(failures.length)}.${first} Check ${labeller.check}, then ${then}.`,
        details,
      });
    default:
      return assertNever(labeller, 'labeller');
  }
}
