import { AgentFlowError, type StepScoringInput } from '@agentflow/core';

/**
 * Which confidence features the head reads (`PrmConfig.confidence`):
 * - `log-probs` (also `true`, the setting's first meaning): the decision's log-likelihood, its
 *   least likely token's log-prob and the least likely token's of any decision so far: 3 values;
 * - `extended`: those three, each also as a probability (its `exp`, in [0, 1]), the product over
 *   the decisions so far of each one's least likely token probability, and how many decisions came
 *   before this one: 8 values.
 *
 * A logistic head is linear in its inputs, and the chance that a trajectory succeeds is not
 * linear in a log-prob: on the Monte-Carlo labels of the world with recoverable mistakes it falls
 * from 0.73 where no token so far was below probability 1/e to 0.14 just under it, and stays at
 * 0.14-0.26 down to log-probs of -30 (the repository's docs/perf.md). The probabilities put that
 * step where a linear head can draw it; the count of earlier decisions says how much of the step
 * budget is spent.
 */
export type ConfidenceFeatureSet = 'log-probs' | 'extended';
/** The names `PrmConfig.confidence` takes: off, or a feature set (`true` meaning `log-probs`). */
export type ConfidenceSetting = boolean | ConfidenceFeatureSet;

const FEATURE_COUNTS: Record<ConfidenceFeatureSet, number> = { 'log-probs': 3, extended: 8 };

/** How many confidence features `log-probs` gives, the head's extra inputs with `confidence: true`. */
export const CONFIDENCE_FEATURE_COUNT = FEATURE_COUNTS['log-probs'];

/** The feature set a `confidence` setting names, undefined when it is off. */
export function confidenceFeatureSet(setting: ConfidenceSetting | undefined): ConfidenceFeatureSet | undefined {
  if (setting === undefined || setting === false) return undefined;
  return setting === true ? 'log-probs' : setting;
}

/** How many values a `confidence` setting adds to the head's inputs (0 when off). */
export function confidenceFeatureCount(setting: ConfidenceSetting | undefined): number {
  const set = confidenceFeatureSet(setting);
  return set ? FEATURE_COUNTS[set] : 0;
}

/** How an error names a step: its id, or the start of its question when it has none. */
export function describeStep(input: Pick<StepScoringInput, 'question'> & { id?: string }): string {
  return input.id ?? JSON.stringify(input.question.slice(0, 60));
}

// A token the sampler could not have drawn (-Infinity) counts as this unlikely, so features stay finite.
const LOGPROB_FLOOR = -30;

/**
 * The planner's confidence in a trajectory up to a decision, from the log-probs it sampled
 * the tokens with (see `ConfidenceFeatureSet` for what each set holds). These are the signals of
 * confidence-based trace filtering (the lowest token confidence of a trace predicts its
 * errors): a decision the planner took against its own judgement, a wrong operator drawn
 * with p 0.1 where the right one had 0.8, is plain here, and so is every step after it.
 * An empty completion counts as certain (0).
 */
export function confidenceFeatures(input: StepScoringInput & { id?: string }, set: ConfidenceFeatureSet = 'log-probs'): number[] {
  const { completionLogprobs, historyLogprobs } = input;
  if (completionLogprobs === undefined || historyLogprobs === undefined || historyLogprobs.length !== input.history.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `PRM confidence features need each step's completionLogprobs and the historyLogprobs of every decision before it, but step ${describeStep(input)} has ${
        completionLogprobs === undefined
          ? 'no completionLogprobs'
          : historyLogprobs === undefined
            ? 'no historyLogprobs'
            : `${historyLogprobs.length} historyLogprobs for ${input.history.length} history decisions`
      } (a policy that does not report log-probs, or label files written before they were recorded: relabel, or set confidence false).`,
    });
  }
  const floored = (logprobs: readonly number[]) =>
    logprobs.map((value) => {
      if (Number.isNaN(value) || value > 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `A log-prob of step ${describeStep(input)} is ${value}; log-probs are numbers <= 0.`,
        });
      }
      return Math.max(value, LOGPROB_FLOOR);
    });
  const lowest = (logprobs: readonly number[]) => floored(logprobs).reduce((low, value) => Math.min(low, value), 0);
  const likelihood = floored(completionLogprobs).reduce((sum, value) => sum + value, 0);
  const stepLowest = lowest(completionLogprobs);
  const historyLowest = historyLogprobs.map(lowest);
  const trajectoryLowest = historyLowest.reduce((low, value) => Math.min(low, value), stepLowest);
  if (set === 'log-probs') return [likelihood, stepLowest, trajectoryLowest];
  const lowestSum = historyLowest.reduce((sum, value) => sum + value, stepLowest);
  return [
    likelihood,
    stepLowest,
    trajectoryLowest,
    Math.exp(likelihood),
    Math.exp(stepLowest),
    Math.exp(trajectoryLowest),
    Math.exp(lowestSum),
    input.history.length,
  ];
}
