import { AgentFlowError } from '@agentflow/core';
import { type ClippedSurrogateResult, type ClippedSurrogateSettings, clippedSurrogate } from './clipped-surrogate';
import { type TokenWeightSettings, aggregationTokenWeights } from './token-weights';

/** One completion: per-token arrays, all [tokens_i]. */
export interface SurrogateSequence {
  newLogprobs: ArrayLike<number>;
  oldLogprobs: ArrayLike<number>;
  advantages: ArrayLike<number>;
  /** 1 for tokens that count, 0 for padding; all 0 masks the whole completion. Default all 1. */
  mask?: ArrayLike<number>;
  referenceLogprobs?: ArrayLike<number>;
}

export interface SequenceLossResult extends Omit<ClippedSurrogateResult, 'gradient'> {
  /** [sequences][tokens_i] d loss / d newLogprobs. */
  gradients: Float64Array[];
}

/**
 * The DAPO loss of a whole batch of ragged completions with the chosen aggregation:
 * token weights from the masks, then the clipped surrogate over the flattened tokens.
 */
export function sequenceSurrogateLoss(
  sequences: readonly SurrogateSequence[],
  settings: ClippedSurrogateSettings & TokenWeightSettings,
): SequenceLossResult {
  const masks = sequences.map((sequence, row) => {
    const length = sequence.newLogprobs.length;
    if (sequence.mask !== undefined && sequence.mask.length !== length) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Sequence ${row}: mask has ${sequence.mask.length} entries but newLogprobs has ${length}.`,
      });
    }
    return sequence.mask ?? new Float64Array(length).fill(1);
  });
  const weights = aggregationTokenWeights(masks, settings);
  const flat = (pick: (sequence: SurrogateSequence, row: number) => ArrayLike<number> | undefined): Float64Array => {
    const total = sequences.reduce((sum, sequence) => sum + sequence.newLogprobs.length, 0);
    const result = new Float64Array(total); // [all tokens]
    let offset = 0;
    sequences.forEach((sequence, row) => {
      const values = pick(sequence, row);
      const length = sequence.newLogprobs.length;
      if (values !== undefined && values.length !== length) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `Sequence ${row}: per-token arrays differ in length (${values.length} vs ${length}).`,
        });
      }
      for (let token = 0; token < length; token++) result[offset + token] = values === undefined ? 0 : (values[token] as number);
      offset += length;
    });
    return result;
  };
  const needsReference = (settings.klCoefficient ?? 0) !== 0;
  const missing = needsReference ? sequences.findIndex((sequence) => sequence.referenceLogprobs === undefined) : -1;
  if (missing >= 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `klCoefficient ${settings.klCoefficient} needs referenceLogprobs, but sequence ${missing} has none.`,
    });
  }
  const result = clippedSurrogate(
    {
      newLogprobs: flat((sequence) => sequence.newLogprobs),
      oldLogprobs: flat((sequence) => sequence.oldLogprobs),
      advantages: flat((sequence) => sequence.advantages),
      tokenWeights: flat((_sequence, row) => weights[row]),
      referenceLogprobs: needsReference ? flat((sequence) => sequence.referenceLogprobs) : undefined,
    },
    settings,
  );
  const { gradient, ...rest } = result;
  let offset = 0;
  const gradients = sequences.map((sequence) => {
    const slice = gradient.slice(offset, offset + sequence.newLogprobs.length);
    offset += sequence.newLogprobs.length;
    return slice;
  });
  return { ...rest, gradients };
}
