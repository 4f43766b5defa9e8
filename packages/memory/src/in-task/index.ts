/** The in-task step log: created per task, rendered into prompts, saved as JSON. */
export { createInTaskMemory, restoreInTaskMemory, type InTaskMemory } from './in-task-memory';
/** Renders a step log within a character budget, in the `full` or `compact` style. */
export { renderMemory, type MemoryRenderSettings } from './render-memory';
/** Cuts a long text in the middle, leaving a marker with the number of characters cut. */
export { cutMiddle } from './cut-middle';
/** Zod schemas of a step entry and of a saved memory. */
export {
  inTaskMemorySnapshotSchema,
  memoryEntrySchema,
  type InTaskMemorySnapshot,
  type MemoryEntry,
} from './step-entry';
