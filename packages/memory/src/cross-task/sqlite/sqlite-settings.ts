import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { RECIPROCAL_RANK_FUSION_K } from '../reciprocal-rank-fusion';

/** Settings of the embedded SQLite memory store. */
export const sqliteMemoryStoreSettingsSchema = z.object({
  path: z
    .string()
    .min(1)
    .describe('Database file; created with its schema when missing. ":memory:" keeps it in RAM (tests).'),
  dimensions: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Vector size. When omitted, the first record with an embedding fixes it for the life of the file.',
    ),
  busyTimeoutMs: z
    .number()
    .int()
    .nonnegative()
    .default(5000)
    .describe('How long a connection waits for a lock held by another connection (better-sqlite3 default: 5000 ms).'),
  synchronous: z
    .enum(['normal', 'full'])
    .default('normal')
    .describe(
      'SQLite synchronous pragma. "normal" with WAL never corrupts the file and keeps every committed add when the process dies; only a power loss can drop the last commits (SQLite docs, "WAL mode"). "full" also survives power loss, at a slower commit.',
    ),
  bm25Weights: z
    .object({
      question: z.number().nonnegative().default(1).describe('BM25 weight of the question column.'),
      trajectory: z.number().nonnegative().default(1).describe('BM25 weight of the trajectory column.'),
      answer: z.number().nonnegative().default(1).describe('BM25 weight of the answer column.'),
    })
    .default({ question: 1, trajectory: 1, answer: 1 })
    .describe('Per-column weights given to FTS5 bm25() (FTS5 docs: every column weighs 1.0 by default).'),
  fusionDepth: z
    .number()
    .int()
    .positive()
    .default(100)
    .describe('Hybrid mode: how many results each of BM25 and vector search contributes to the fusion.'),
  rrfK: z
    .number()
    .positive()
    .default(RECIPROCAL_RANK_FUSION_K)
    .describe('Reciprocal rank fusion constant (Cormack, Clarke and Büttcher 2009: k = 60).'),
});

export type SqliteMemoryStoreSettings = z.input<typeof sqliteMemoryStoreSettingsSchema>;
export type ResolvedSqliteMemoryStoreSettings = z.output<typeof sqliteMemoryStoreSettingsSchema>;

export function parseSqliteMemoryStoreSettings(settings: unknown): ResolvedSqliteMemoryStoreSettings {
  const result = sqliteMemoryStoreSettingsSchema.safeParse(settings);
  if (!result.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid SQLite memory store settings:\n${formatZodIssues(result.error, 'settings').join('\n')}`,
    });
  }
  return result.data;
}
