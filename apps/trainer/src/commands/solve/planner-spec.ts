import { AgentFlowError, describeValue } from '@agentflow/core';

/** Which model plans: `ollama:MODEL`, `openai:MODEL` or `local:DIR`. */
export type PlannerSpec =
  | { kind: 'ollama'; model: string }
  | { kind: 'openai'; model: string }
  | { kind: 'local'; dir: string };

/** Parses `--planner`; the part after the first colon is the model (Ollama tags contain colons). */
export function parsePlannerSpec(text: string): PlannerSpec {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? '' : text.slice(colon + 1);
  if (rest !== '') {
    if (kind === 'ollama' || kind === 'openai') return { kind, model: rest };
    if (kind === 'local') return { kind, dir: rest };
  }
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `--planner ${describeValue(text)} is not one of ollama:MODEL, openai:MODEL or local:DIR (e.g. ollama:qwen3:8b).`,
    details: { planner: text },
  });
}

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
