import { AgentFlowError, type StepScoringInput } from '@agentflow/core';

/** How many confidence features `confidenceFeatures` gives: the head's extra inputs. */
export const CONFIDENCE_FEATURE_COUNT = 3;

/** How an error names a step: its id, or the start of its question when it has none. */
export function describeStep(input: Pick<StepScoringInput, 'question'> & { id?: string }): string {
  return input.id ?? JSON.stringify(input.question.slice(0, 60));
}

// A token the sampler could not have drawn (-Infinity) counts as this unlikely, so features stay finite.
const LOGPROB_FLOOR = -30;

/**
 * The planner's confidence in a trajectory up to a decision, from the log-probs it sampled
 * the tokens with: [the decision's log-likelihood (the sum), its least likely token, the
 * least likely token of any decision so far, this one included]. These are the signals of
 * confidence-based trace filtering (the lowest token confidence of a trace predicts its
 * errors): a decision the planner took against its own judgement, a wrong operator drawn
 * with p 0.1 where the right one had 0.8, is plain here, and so is every step after it.
 * An empty completion counts as certain (0).
 */
export function confidenceFeatures(input: StepScoringInput & { id?: string }): [number, number, number] {
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
  const trajectoryLowest = historyLogprobs.reduce((low, logprobs) => Math.min(low, lowest(logprobs)), stepLowest);
  return [likelihood, stepLowest, trajectoryLowest];
}
