import { AgentFlowError, describeValue } from '@agentflow/core';

/**
 * Reads a list that a file stored either as a JSON array or as the text of one (JSON or
 * Python literal with single quotes, as some benchmark exports do). A plain scalar becomes
 * a list of one.
 */
export function readList(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
      const parsed = parseListText(trimmed);
      if (parsed) return parsed;
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${what}: ${describeValue(value)} looks like a list but does not parse as one.`,
        details: { value },
      });
    }
    return [value];
  }
  if (typeof value === 'number') return [value];
  throw new AgentFlowError({
    code: 'SCHEMA_VALIDATION',
    message: `${what}: expected a list, a string or a number, got ${describeValue(value)}.`,
    details: { value },
  });
}

function parseListText(text: string): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: try the Python literal form below.
  }
  const items: string[] = [];
  const pattern = /\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+(?:\.\d+)?))\s*(,|$)/y;
  const body = text.slice(1, -1);
  pattern.lastIndex = 0;
  while (pattern.lastIndex < body.length) {
    const match = pattern.exec(body);
    if (!match) return undefined;
    items.push(match[1] ?? match[2] ?? match[3] ?? '');
    if (match[4] === '') break;
  }
  return items;
}

/** A scalar field as text: numbers are written plainly, strings trimmed. */
export function readText(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new AgentFlowError({
    code: 'SCHEMA_VALIDATION',
    message: `${what}: expected a string or a number, got ${describeValue(value)}.`,
    details: { value },
  });
}
