import { AgentFlowError, describeValue } from '@agentflow/core';

export interface OverlongSettings {
  /** L_max: the hard generation limit in tokens. */
  maxLength: number;
  /** L_cache: the soft zone before L_max where the penalty grows linearly. */
  cacheLength: number;
  /** Scale of the penalty (1 in DAPO). */
  penaltyFactor?: number;
}

/**
 * DAPO's soft overlong punishment (section 3.4): 0 up to L_max - L_cache, then linear
 * down to -1 at L_max, and -1 beyond. Added to the outcome reward.
 */
export function softOverlongPenalty(length: number, settings: OverlongSettings): number {
  const { maxLength, cacheLength } = settings;
  const factor = settings.penaltyFactor ?? 1;
  if (!Number.isInteger(maxLength) || !Number.isInteger(cacheLength) || cacheLength < 0 || cacheLength > maxLength) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Overlong settings need integers 0 <= cacheLength <= maxLength, got maxLength ${describeValue(maxLength)}, cacheLength ${describeValue(cacheLength)}.`,
    });
  }
  if (!Number.isInteger(length) || length < 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Completion length must be a non-negative integer, got ${describeValue(length)}.`,
    });
  }
  const softStart = maxLength - cacheLength;
  if (length <= softStart) return 0;
  if (length <= maxLength) return (factor * (softStart - length)) / cacheLength;
  return -factor;
}

/**
 * [tokens] loss mask of a completion: all 1, or all 0 when the completion was truncated
 * and truncated completions are masked out of the loss (DAPO's overlong filtering).
 */
export function completionMask(length: number, truncated: boolean, maskTruncated: boolean): Float64Array {
  return new Float64Array(length).fill(truncated && maskTruncated ? 0 : 1);
}
