import { AgentFlowError, describeValue } from '@agentflow/core';

/** INVALID_ARGUMENT naming the option, what it must be and what was typed. */
function invalid(option: string, text: string, expected: string): AgentFlowError {
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${option} must be ${expected}, got ${describeValue(text)}.`,
    details: { option, value: text },
  });
}

/** An integer option at or above `minimum` (none by default: `--seed -3` is fine). */
export function parseInteger(option: string, text: string, minimum = Number.NEGATIVE_INFINITY): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < minimum) {
    throw invalid(option, text, minimum === 1 ? 'a positive integer' : minimum === Number.NEGATIVE_INFINITY ? 'an integer' : `an integer >= ${minimum}`);
  }
  return value;
}

/** A positive integer option (`--max-steps 10`). */
export const parsePositiveInteger = (option: string, text: string): number => parseInteger(option, text, 1);

/** A finite number option within `[minimum, maximum]` (unbounded by default). */
export function parseNumber(option: string, text: string, minimum = Number.NEGATIVE_INFINITY, maximum = Number.POSITIVE_INFINITY): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < minimum || value > maximum) {
    const bounds = Number.isFinite(maximum) ? ` between ${minimum} and ${maximum}` : Number.isFinite(minimum) ? ` of at least ${minimum}` : '';
    throw invalid(option, text, `a number${bounds}`);
  }
  return value;
}

/**
 * A time limit in seconds: a positive, finite number (decimals allowed). Junk, zero, negatives
 * and values that overflow to Infinity are refused; any finite length is fine downstream (long
 * timers are re-armed, not overflowed).
 */
export function parsePositiveSeconds(option: string, text: string): number {
  const value = /^\s*\d*\.?\d+(e[+-]?\d+)?\s*$/i.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0) throw invalid(option, text, 'a positive, finite number of seconds (e.g. 300 or 2.5)');
  return value;
}

/** One of a fixed set of words (`--device`, `--template`). */
export function parseChoice<const T extends string>(option: string, text: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(text)) throw invalid(option, text, `one of ${choices.join(', ')}`);
  return text as T;
}
