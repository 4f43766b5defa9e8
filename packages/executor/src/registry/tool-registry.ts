import {
  AgentFlowError,
  type Tool,
  type ToolCall,
  type ToolResult,
  describeValue,
  formatZodIssues,
  toolResultSchema,
} from '@agentflow/core';
import { type JsonSchema, coerceToolInput, toolInputJsonSchema } from './input-schema';
import { truncateMiddle } from './truncate';

export interface ToolRegistrySettings {
  /** The tools to start with; more can be added with `register`. */
  tools?: Tool<unknown>[];
  /** Wall-clock limit of one call, in milliseconds. Default 60 s (python's own limit is 30 s). */
  timeoutMs?: number;
  /** Longest output shown to the planner, in characters; the middle is cut. Default 8,000. */
  maxOutputChars?: number;
  /** Clock for `durationMs`; injectable for tests. Default `performance.now`. */
  now?: () => number;
}

/** One entry of the planner's tool catalogue. */
export interface ToolDescription {
  name: string;
  description: string;
  /** JSON schema of the input (zod 4 `z.toJSONSchema`, or the MCP server's own schema). */
  inputSchema: JsonSchema;
}

export interface ToolExecutionContext {
  /** Keys per-task state (the Python REPL). */
  taskId: string;
  /** Cancels the call (the run was cancelled). */
  signal?: AbortSignal;
}

export interface ToolRegistry {
  /** Adds tools; a name already registered is an INVALID_ARGUMENT error. */
  register(...tools: Tool<unknown>[]): void;
  has(name: string): boolean;
  /** The tool of that name; NOT_FOUND naming the known tools otherwise. */
  get(name: string): Tool<unknown>;
  names(): string[];
  list(): Tool<unknown>[];
  /** Name, description and input JSON schema of every tool, for the planner's prompt. */
  catalogue(): ToolDescription[];
  /**
   * Runs one call. Never throws: an unknown tool, invalid input, a tool that throws, times
   * out or is cancelled all come back as a ToolResult with `error`.
   */
  execute(call: ToolCall, context: ToolExecutionContext): Promise<ToolResult>;
  /** Releases the per-task state of every tool (all tasks when `taskId` is omitted). */
  dispose(taskId?: string): Promise<void>;
}

interface Entry {
  tool: Tool<unknown>;
  jsonSchema: JsonSchema;
}

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Creates a registry over core `Tool`s: lookup, validation, timeouts and output limits. */
export function createToolRegistry(settings: ToolRegistrySettings = {}): ToolRegistry {
  const timeoutMs = settings.timeoutMs ?? 60_000;
  const maxOutputChars = settings.maxOutputChars ?? 8_000;
  const now = settings.now ?? (() => performance.now());
  for (const [key, value] of [['timeoutMs', timeoutMs], ['maxOutputChars', maxOutputChars]] as const) {
    if (!Number.isFinite(value) || value <= 0) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Tool registry setting ${key} must be a positive number, got ${describeValue(value)}.`,
        details: { [key]: value },
      });
    }
  }
  const entries = new Map<string, Entry>();

  const unknownTool = (name: string) =>
    `Unknown tool ${describeValue(name)}; known tools: ${[...entries.keys()].join(', ') || '(none)'}.`;

  const registry: ToolRegistry = {
    register(...tools) {
      for (const tool of tools) {
        if (typeof tool?.name !== 'string' || !TOOL_NAME.test(tool.name) || tool.name === 'finish') {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `Tool name ${describeValue(tool?.name)} is not allowed: expected a letter then letters, digits, "_", "-" or "." (at most 64), and not "finish".`,
          });
        }
        if (entries.has(tool.name)) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `A tool named "${tool.name}" is already registered.`,
            details: { name: tool.name },
          });
        }
        entries.set(tool.name, { tool, jsonSchema: toolInputJsonSchema(tool) });
      }
    },
    has: (name) => entries.has(name),
    get(name) {
      const entry = entries.get(name);
      if (!entry) throw new AgentFlowError({ code: 'NOT_FOUND', message: unknownTool(name), details: { name, known: [...entries.keys()] } });
      return entry.tool;
    },
    names: () => [...entries.keys()],
    list: () => [...entries.values()].map((entry) => entry.tool),
    catalogue: () =>
      [...entries.values()].map(({ tool, jsonSchema }) => ({ name: tool.name, description: tool.description, inputSchema: jsonSchema })),
    async execute(call, context) {
      const started = now();
      const failure = (error: string): ToolResult => ({ output: '', error, truncated: false, durationMs: Math.max(0, now() - started) });
      const entry = entries.get(call.tool);
      if (!entry) return failure(unknownTool(call.tool));
      const parsed = entry.tool.inputSchema.safeParse(coerceToolInput(call.input, entry.jsonSchema));
      if (!parsed.success) {
        return failure(
          `Invalid input for tool "${call.tool}": ${formatZodIssues(parsed.error).join('; ')} ` +
            `(got ${describeValue(call.input)}; expected ${describeValue(entry.jsonSchema, 300)}).`,
        );
      }
      if (context.signal?.aborted) return failure(`Tool "${call.tool}" was cancelled before it started.`);
      const outcome = await runWithLimits(entry.tool, parsed.data, context, timeoutMs);
      const durationMs = Math.max(0, now() - started);
      switch (outcome.kind) {
        case 'timeout':
          return failure(`Tool "${call.tool}" timed out after ${timeoutMs / 1000} s.`);
        case 'cancelled':
          return failure(`Tool "${call.tool}" was cancelled.`);
        case 'threw':
          return failure(`Tool "${call.tool}" failed: ${errorText(outcome.error)}`);
        case 'returned': {
          const checked = toolResultSchema.safeParse(outcome.result);
          if (!checked.success) {
            return failure(`Tool "${call.tool}" returned a malformed result: ${formatZodIssues(checked.error).join('; ')}`);
          }
          const cut = truncateMiddle(checked.data.output, maxOutputChars);
          const result: ToolResult = { output: cut.text, truncated: checked.data.truncated || cut.truncated, durationMs };
          if (checked.data.error !== undefined) result.error = truncateMiddle(checked.data.error, maxOutputChars).text;
          return result;
        }
      }
    },
    async dispose(taskId) {
      await Promise.allSettled([...entries.values()].map(({ tool }) => Promise.resolve().then(() => tool.dispose?.(taskId))));
    },
  };
  registry.register(...(settings.tools ?? []));
  return registry;
}

type Outcome =
  | { kind: 'returned'; result: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'cancelled' };

/** Races the tool against the timeout and the caller's signal; aborts the tool's signal when either wins. */
async function runWithLimits(tool: Tool<unknown>, input: unknown, context: ToolExecutionContext, timeoutMs: number): Promise<Outcome> {
  const controller = new AbortController();
  const signal = context.signal ? AbortSignal.any([context.signal, controller.signal]) : controller.signal;
  let timer: NodeJS.Timeout | undefined;
  let onCancel: (() => void) | undefined;
  const limits = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
    onCancel = () => resolve({ kind: 'cancelled' });
    context.signal?.addEventListener('abort', onCancel, { once: true });
  });
  const run = Promise.resolve()
    .then(() => tool.execute(input, { signal, taskId: context.taskId }))
    .then(
      (result): Outcome => ({ kind: 'returned', result }),
      (error: unknown): Outcome => ({ kind: 'threw', error }),
    );
  const outcome = await Promise.race([run, limits]);
  clearTimeout(timer);
  if (onCancel) context.signal?.removeEventListener('abort', onCancel);
  if (outcome.kind === 'timeout' || outcome.kind === 'cancelled') {
    controller.abort(new AgentFlowError({ code: outcome.kind === 'timeout' ? 'TIMEOUT' : 'ABORTED', message: `tool ${tool.name} ${outcome.kind}` }));
  }
  return outcome;
}

function errorText(error: unknown): string {
  if (AgentFlowError.isInstance(error)) return `[${error.code}] ${error.message}`;
  if (error instanceof Error) return error.message;
  return describeValue(error);
}
