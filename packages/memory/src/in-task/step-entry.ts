import { z } from 'zod';

/** One step of the in-task log: what the planner decided and what came of it. */
export const memoryEntrySchema = z
  .object({
    index: z.number().int().nonnegative().describe('0-based step number.'),
    thought: z.string().describe('The planner thought (empty on a format error).'),
    action: z.string().nullable().describe('Tool name or "finish"; null when the planner output did not parse.'),
    actionInput: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .nullable()
      .describe('The action input as the planner wrote it; null on a format error.'),
    parseError: z.string().optional().describe('Why the planner output did not parse.'),
    toolOutput: z.string().optional().describe('What the tool printed (untruncated; cut only when rendered).'),
    toolError: z.string().optional().describe('Why the tool call failed.'),
  })
  .strict();
export type MemoryEntry = z.infer<typeof memoryEntrySchema>;

/** The JSON form of an in-task memory (`version` guards future changes of the layout). */
export const inTaskMemorySnapshotSchema = z
  .object({
    version: z.literal(1),
    question: z.string(),
    entries: z.array(memoryEntrySchema),
  })
  .strict();
export type InTaskMemorySnapshot = z.infer<typeof inTaskMemorySnapshotSchema>;
