import { AgentFlowError, describeValue } from '@agentflow/core';

/** Parses a positive integer option, naming the option when it is not one. */
export function parsePositiveInteger(option: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} must be a positive integer, got ${describeValue(text)}.`,
      details: { option, value: text },
    });
  }
  return value;
}

/**
 * Parses a time limit in seconds: a positive, finite number (decimals allowed). Junk,
 * zero, negatives and values that overflow to Infinity are an INVALID_ARGUMENT naming the
 * option; any finite length is fine downstream (long timers are re-armed, not overflowed).
 */
export function parsePositiveSeconds(option: string, text: string): number {
  const value = /^\s*\d*\.?\d+(e[+-]?\d+)?\s*$/i.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} must be a positive, finite number of seconds (e.g. 300 or 2.5), got ${describeValue(text)}.`,
      details: { option, value: text },
    });
  }
  return value;
}
