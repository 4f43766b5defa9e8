import { AgentFlowError } from '@agentflow/core';
import type { z } from 'zod';

/** Parses command-line options with a zod schema, as a usage error naming each bad option. */
export function parseOptions<Schema extends z.ZodType>(command: string, schema: Schema, raw: unknown): z.infer<Schema> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `agentflow ${command}: ${parsed.error.issues
        .map((issue) => `${optionName(issue.path)}: ${issue.message}`)
        .join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/** `['judgeModel']` -> `--judge-model`, as the user typed it. */
function optionName(path: readonly PropertyKey[]): string {
  const key = path.map(String).join('.');
  return key === '' ? '(options)' : `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}
