import type { MemoryRecord } from '@agentflow/core';

/** Deterministic content of record `index` of batch `batch`, so the parent can check every field. */
export function crashRecord(batch: number, index: number): MemoryRecord {
  const id = `batch-${batch}-record-${index}`;
  return {
    id,
    question: `Question ${index} of batch ${batch}: what is ${batch} plus ${index}?`,
    trajectory: `python("${batch}+${index}") -> ${batch + index}; `.repeat(40),
    answer: String(batch + index),
    outcome: (batch + index) % 2,
    embedding: Array.from({ length: 8 }, (_, position) => Math.fround(Math.sin(batch * 31 + index * 7 + position) + 2)),
    metadata: { batch, index },
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, batch, index % 1000)).toISOString(),
  };
}

export function crashBatch(batch: number, size: number): MemoryRecord[] {
  return Array.from({ length: size }, (_, index) => crashRecord(batch, index));
}
