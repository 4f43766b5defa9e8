import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import type { z } from 'zod';
import type { HttpEnvironment } from './http-settings';

const environmentKeys = ['fetch', 'random', 'sleep', 'now'] as const;

/**
 * Separates the injected outside world (functions) from the data settings, and parses
 * the data with its zod schema so a typo or a bad value fails at construction.
 */
export function parseModelSettings<Schema extends z.ZodType>(
  schema: Schema,
  input: Record<string, unknown>,
  what: string,
  extraKeys: readonly string[] = [],
): { settings: z.output<Schema>; environment: HttpEnvironment; extra: Record<string, unknown> } {
  const data: Record<string, unknown> = {};
  const environment: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if ((environmentKeys as readonly string[]).includes(key)) environment[key] = value;
    else if (extraKeys.includes(key)) extra[key] = value;
    else data[key] = value;
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid ${what} settings:\n${formatZodIssues(parsed.error).join('\n')}`,
      details: { issues: parsed.error.issues },
    });
  }
  return { settings: parsed.data, environment: environment as HttpEnvironment, extra };
}
