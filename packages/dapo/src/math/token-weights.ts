import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';

/**
 * How per-token terms become one loss.
 * - 'token-mean' (DAPO, section 3.3): sum over all tokens / number of tokens in the batch.
 * - 'sequence-mean' (GRPO): mean over tokens of each sequence, then mean over sequences.
 * - 'dr-grpo' (Dr. GRPO): sum over all tokens / (number of sequences * a constant token budget).
 */
export type LossAggregation = 'token-mean' | 'sequence-mean' | 'dr-grpo';

export interface TokenWeightSettings {
  aggregation: LossAggregation;
  /** The constant of 'dr-grpo' (the generation budget); ignored otherwise. */
  tokenBudget?: number;
}

/**
 * Per-token weights w such that loss = -sum(w * term) is the chosen aggregation over the
 * whole batch. `masks[i][t]` is 1 for a token that counts and 0 for padding or a masked
 * (for example truncated) completion; a sequence whose mask is all 0 is left out of every
 * count. Because the weights are global, any split of the rows into micro-batches adds up
 * to the same loss and gradient.
 */
export function aggregationTokenWeights(
  masks: ReadonlyArray<ArrayLike<number>>,
  settings: TokenWeightSettings,
): Float64Array[] {
  const lengths = masks.map((mask, row) => {
    let length = 0;
    for (let token = 0; token < mask.length; token++) {
      const value = mask[token] as number;
      if (value !== 0 && value !== 1) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `masks[${row}][${token}] must be 0 or 1, got ${describeValue(value)}.`,
        });
      }
      length += value;
    }
    return length;
  });
  const sequences = lengths.filter((length) => length > 0).length;
  const tokens = lengths.reduce((sum, length) => sum + length, 0);
  const sequenceWeight = (length: number): number => {
    if (length === 0) return 0;
    switch (settings.aggregation) {
      case 'token-mean':
        return 1 / tokens;
      case 'sequence-mean':
        return 1 / (length * sequences);
      case 'dr-grpo': {
        const budget = settings.tokenBudget;
        if (budget === undefined || !(budget > 0)) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `'dr-grpo' aggregation needs a positive tokenBudget, got ${describeValue(budget)}.`,
          });
        }
        return 1 / (sequences * budget);
      }
      default:
        return assertNever(settings.aggregation, 'loss aggregation');
    }
  };
  return masks.map((mask, row) => {
    const weight = sequenceWeight(lengths[row] as number);
    const weights = new Float64Array(mask.length); // [tokens_i]
    for (let token = 0; token < mask.length; token++) weights[token] = weight * (mask[token] as number);
    return weights;
  });
}
