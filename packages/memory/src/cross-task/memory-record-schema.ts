import { AgentFlowError, type MemoryQuery, type MemoryRecord, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';

/** Validates records at the store's edge, so a bad record never reaches the database. */
export const memoryRecordSchema = z.object({
  id: z.string().min(1).describe('Caller-chosen unique id; adding an existing id replaces that record.'),
  question: z.string().describe('The task question, indexed for BM25.'),
  trajectory: z.string().describe('A compact rendering of the trajectory, indexed for BM25.'),
  answer: z.string().describe('The final answer, indexed for BM25.'),
  outcome: z.number().finite().describe('Outcome reward of the trajectory.'),
  embedding: z
    .array(z.number().finite())
    .min(1)
    .optional()
    .describe('Embedding of the question; stored at float32 precision.'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON metadata.'),
  createdAt: z.iso.datetime({ offset: true }).describe('ISO-8601 time the record was written.'),
});

export const memoryQuerySchema = z.object({
  text: z.string().optional(),
  embedding: z.array(z.number().finite()).min(1).optional(),
  k: z.number().int().positive(),
  mode: z.enum(['bm25', 'vector', 'hybrid']),
  minScore: z.number().finite().optional(),
});

/** Parses every record or throws one INVALID_ARGUMENT error naming each bad record. */
export function parseMemoryRecords(records: unknown): MemoryRecord[] {
  if (!Array.isArray(records)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'MemoryStore.add expects an array of records.',
      details: { received: typeof records },
    });
  }
  const problems: string[] = [];
  const parsed: MemoryRecord[] = [];
  records.forEach((record, index) => {
    const result = memoryRecordSchema.safeParse(record);
    if (result.success) {
      parsed.push(result.data as MemoryRecord);
      if (result.data.embedding && isZeroVector(result.data.embedding)) {
        problems.push(`records[${index}].embedding: a zero vector has no cosine similarity`);
      }
    } else {
      problems.push(...formatZodIssues(result.error, `records[${index}]`));
    }
  });
  if (problems.length > 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid memory record(s); nothing was stored:\n${problems.join('\n')}`,
      details: { problems },
    });
  }
  return parsed;
}

/** Parses a query and checks that the mode has what it needs (text, embedding or both). */
export function parseMemoryQuery(query: unknown): MemoryQuery {
  const result = memoryQuerySchema.safeParse(query);
  if (!result.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid memory query:\n${formatZodIssues(result.error, 'query').join('\n')}`,
    });
  }
  const parsed = result.data as MemoryQuery;
  const needsText = parsed.mode === 'bm25' || parsed.mode === 'hybrid';
  const needsEmbedding = parsed.mode === 'vector' || parsed.mode === 'hybrid';
  if (needsText && parsed.text === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Memory query mode "${parsed.mode}" needs query.text; none was given.`,
    });
  }
  if (needsEmbedding && parsed.embedding === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Memory query mode "${parsed.mode}" needs query.embedding; embed the question first (see createExampleRetriever).`,
    });
  }
  if (parsed.embedding && isZeroVector(parsed.embedding)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'query.embedding is a zero vector, which has no cosine similarity to anything.',
    });
  }
  return parsed;
}

function isZeroVector(vector: number[]): boolean {
  return vector.every((value) => value === 0);
}

/** Throws SHAPE_MISMATCH when an embedding does not have the store's vector size. */
export function assertEmbeddingSize(embedding: number[], dimensions: number, what: string): void {
  if (embedding.length !== dimensions) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `${what} has ${embedding.length} dimensions; this memory store holds ${dimensions}-dimensional vectors.`,
      details: { received: embedding.length, expected: dimensions },
    });
  }
}
