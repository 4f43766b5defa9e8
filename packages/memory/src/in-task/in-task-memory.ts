import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import type { ZodError } from 'zod';
import { type MemoryRenderSettings, renderMemory } from './render-memory';
import { type InTaskMemorySnapshot, inTaskMemorySnapshotSchema, type MemoryEntry, memoryEntrySchema } from './step-entry';

/** The record of one task's steps, for prompts and for saving. */
export interface InTaskMemory {
  readonly question: string;
  /** Appends a step; its `index` must be the next one (0, 1, 2...). */
  record(entry: MemoryEntry): void;
  entries(): readonly MemoryEntry[];
  /** The log as prompt text within a character budget (see {@link renderMemory}). */
  render(settings?: MemoryRenderSettings): string;
  /** A JSON-serialisable snapshot; {@link restoreInTaskMemory} reads it back. */
  toJSON(): InTaskMemorySnapshot;
}

function invalid(what: string, error: ZodError): AgentFlowError {
  return new AgentFlowError({
    code: 'SCHEMA_VALIDATION',
    message: `${what}:\n${formatZodIssues(error).join('\n')}`,
    details: { issues: error.issues },
  });
}

/** Creates an empty (or pre-filled) in-task memory for `question`. */
export function createInTaskMemory(question: string, initial: readonly MemoryEntry[] = []): InTaskMemory {
  const entries: MemoryEntry[] = [];
  const memory: InTaskMemory = {
    question,
    record(entry) {
      const parsed = memoryEntrySchema.safeParse(entry);
      if (!parsed.success) throw invalid('Invalid in-task memory entry', parsed.error);
      if (parsed.data.index !== entries.length) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `In-task memory expected step index ${entries.length}, got ${parsed.data.index}.`,
          details: { expected: entries.length, received: parsed.data.index },
        });
      }
      entries.push(parsed.data);
    },
    entries: () => entries,
    render: (settings) => renderMemory(entries, settings),
    toJSON: () => ({ version: 1, question, entries: entries.map((entry) => ({ ...entry })) }),
  };
  for (const entry of initial) memory.record(entry);
  return memory;
}

/** Rebuilds a memory from {@link InTaskMemory.toJSON} output (or its JSON text). */
export function restoreInTaskMemory(snapshot: unknown): InTaskMemory {
  let value = snapshot;
  if (typeof snapshot === 'string') {
    try {
      value = JSON.parse(snapshot);
    } catch (error) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `In-task memory snapshot is not valid JSON: ${(error as Error).message}`,
        cause: error,
      });
    }
  }
  const parsed = inTaskMemorySnapshotSchema.safeParse(value);
  if (!parsed.success) throw invalid('Invalid in-task memory snapshot', parsed.error);
  return createInTaskMemory(parsed.data.question, parsed.data.entries);
}
