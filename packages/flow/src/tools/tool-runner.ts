import {
  type PlannerAction,
  type Tool,
  type ToolResult,
  describeValue,
  formatZodIssues,
  toolResultSchema,
} from '@agentflow/core';
import { cutMiddle } from '@agentflow/memory';
import { z } from 'zod';

export interface ToolRunnerSettings {
  /** Wall-clock limit of one call; the tool's signal aborts and the call is recorded as timed out (default 60 s). */
  timeoutMs?: number;
  /** Longer outputs are cut in the middle (default 8000 characters). */
  maxOutputChars?: number;
  now?: () => number;
}

export interface ToolRunContext {
  taskId: string;
  signal: AbortSignal;
}

/** Runs planner actions against core `Tool`s. Never throws: every failure is a `ToolResult.error`. */
export interface ToolRunner {
  readonly names: readonly string[];
  run(action: PlannerAction, context: ToolRunContext): Promise<ToolResult>;
  dispose(taskId?: string): Promise<void>;
}

/** The field a bare string input fills: the only required field, when it is a string. */
function soleStringField(tool: Tool): string | undefined {
  try {
    const schema = z.toJSONSchema(tool.inputSchema, { unrepresentable: 'any', io: 'input' }) as {
      properties?: Record<string, { type?: unknown }>;
      required?: string[];
    };
    const required = schema.required ?? [];
    if (required.length === 1 && schema.properties?.[required[0]!]?.type === 'string') return required[0];
  } catch {
    // A schema JSON Schema cannot express: no coercion.
  }
  return undefined;
}

function coerceInput(input: PlannerAction['action_input'], field: string | undefined): unknown {
  if (typeof input !== 'string') return input;
  const trimmed = input.trim();
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      // Not JSON after all.
    }
  }
  return field === undefined ? input : { [field]: input };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : describeValue(error);
}

/** Creates a runner over `tools` with input validation, coercion, a timeout and an output cap. */
export function createToolRunner(tools: readonly Tool[], settings: ToolRunnerSettings = {}): ToolRunner {
  const timeoutMs = settings.timeoutMs ?? 60_000;
  const maxOutputChars = settings.maxOutputChars ?? 8000;
  const now = settings.now ?? (() => performance.now());
  const byName = new Map(tools.map((tool) => [tool.name, { tool, field: soleStringField(tool) }]));

  async function run(action: PlannerAction, context: ToolRunContext): Promise<ToolResult> {
    const started = now();
    const fail = (error: string, output = ''): ToolResult => ({
      output: cutMiddle(output, maxOutputChars),
      error,
      truncated: output.length > maxOutputChars,
      durationMs: Math.max(0, now() - started),
    });
    const entry = byName.get(action.action);
    if (!entry) return fail(`Unknown tool "${action.action}"; available: ${[...byName.keys()].join(', ')}.`);
    const parsed = entry.tool.inputSchema.safeParse(coerceInput(action.action_input, entry.field));
    if (!parsed.success) {
      return fail(`Invalid input for tool "${action.action}": ${formatZodIssues(parsed.error).join('; ')}`);
    }
    if (context.signal.aborted) return fail('Cancelled before the tool ran.');
    const timeout = new AbortController();
    const signal = AbortSignal.any([context.signal, timeout.signal]);
    let timer: NodeJS.Timeout | undefined;
    // Resolves when the call must stop waiting, even if the tool ignores its signal.
    const stopped = new Promise<'timeout' | 'cancelled'>((resolve) => {
      timer = setTimeout(() => {
        timeout.abort();
        resolve('timeout');
      }, timeoutMs);
      context.signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
    });
    try {
      const outcome = await Promise.race([entry.tool.execute(parsed.data, { signal, taskId: context.taskId }), stopped]);
      if (outcome === 'timeout') return fail(`Tool "${action.action}" timed out after ${timeoutMs} ms.`);
      if (outcome === 'cancelled') return fail(`Tool "${action.action}" was cancelled.`);
      const result = toolResultSchema.safeParse(outcome);
      if (!result.success) {
        return fail(`Tool "${action.action}" returned an invalid result: ${formatZodIssues(result.error).join('; ')}`);
      }
      const output = result.data.output;
      return {
        ...result.data,
        output: cutMiddle(output, maxOutputChars),
        truncated: result.data.truncated || output.length > maxOutputChars,
      };
    } catch (error) {
      if (timeout.signal.aborted) return fail(`Tool "${action.action}" timed out after ${timeoutMs} ms.`);
      if (context.signal.aborted) return fail(`Tool "${action.action}" was cancelled.`);
      return fail(`Tool "${action.action}" failed: ${message(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async function dispose(taskId?: string): Promise<void> {
    await Promise.allSettled(tools.map((tool) => tool.dispose?.(taskId)));
  }

  return { names: [...byName.keys()], run, dispose };
}
