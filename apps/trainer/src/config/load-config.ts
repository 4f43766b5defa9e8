import { existsSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';

/**
 * Reads a YAML or JSON config file and validates it. Every problem is reported as
 * `FILE: key.path: what was expected, what was found`, all at once.
 */
export function loadConfig<Schema extends z.ZodType>(path: string, schema: Schema): z.infer<Schema> {
  if (!existsSync(path)) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${path}: config file not found.`,
      details: { path },
    });
  }
  const text = readFileSync(path, 'utf8');
  let raw: unknown;
  try {
    raw = extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${path}: not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(cause as Error).message}`,
      cause,
    });
  }
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const keyPath = issue.path.map(String).join('.') || '(root)';
      const found = issue.code === 'unrecognized_keys' ? '' : `, found ${describeValue(valueAt(raw, issue.path))}`;
      return `${path}: ${keyPath}: ${issue.message}${found}`;
    });
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: lines.join('\n'),
      cause: parsed.error,
      details: { path },
    });
  }
  return parsed.data;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
