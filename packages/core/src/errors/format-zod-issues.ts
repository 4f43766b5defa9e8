import type { z } from 'zod';

/**
 * Renders zod issues as lines of `path: expected X, received Y`, the form every config
 * and input error in AgentFlow uses.
 */
export function formatZodIssues(error: z.ZodError, root = ''): string[] {
  return error.issues.map((issue) => {
    const path = [root, ...issue.path.map(String)].filter(Boolean).join('.') || '(root)';
    return `${path}: ${issue.message}`;
  });
}
