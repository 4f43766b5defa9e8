import { z } from 'zod';

/** The name of the action that ends the loop; its `action_input` is the answer. */
export const FINISH_ACTION = 'finish';

/**
 * One decision of the planner: why, which tool (or `finish`), and with what input.
 * This is the JSON the planner must emit; the only part of the agent that is trained.
 */
export const plannerActionSchema = z
  .object({
    thought: z.string().describe('Brief reasoning behind the decision.'),
    action: z.string().min(1).describe('A registered tool name, or "finish" to answer.'),
    action_input: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .describe('The tool input (an object matching the tool schema, or a string), or the final answer.'),
  })
  .strict();

export type PlannerAction = z.infer<typeof plannerActionSchema>;

/** A resolved call of one tool, as the executor runs it. */
export const toolCallSchema = z.object({
  tool: z.string().min(1).describe('Registered tool name.'),
  input: z.unknown().describe('Input validated against the tool schema.'),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

/** What a tool returns: text for the planner, or an error that the loop records. */
export const toolResultSchema = z.object({
  output: z.string().describe('Text shown to the planner (already truncated to the output limit).'),
  error: z.string().optional().describe('Why the call failed; absent on success.'),
  truncated: z.boolean().default(false).describe('True when the output was cut to fit the limit.'),
  durationMs: z.number().nonnegative().describe('Wall-clock time of the call.'),
});
export type ToolResult = z.infer<typeof toolResultSchema>;
