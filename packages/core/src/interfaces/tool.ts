import type { z } from 'zod';
import type { ToolResult } from '../schemas/planner-action';

export interface ToolContext {
  /** Aborted when the call times out or the run is cancelled. */
  signal: AbortSignal;
  /** Stable id of the task, so stateful tools (the Python REPL) keep one state per task. */
  taskId: string;
}

/** A capability the planner can call by name. */
export interface Tool<Input = unknown> {
  readonly name: string;
  /** One or two sentences for the planner's tool catalogue. */
  readonly description: string;
  readonly inputSchema: z.ZodType<Input>;
  execute(input: Input, context: ToolContext): Promise<ToolResult>;
  /** Releases per-task state (a REPL process); optional. */
  dispose?(taskId?: string): Promise<void>;
}
