import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { RECIPROCAL_RANK_FUSION_K } from '../reciprocal-rank-fusion';

/** Settings of the Qdrant memory store. */
export const qdrantMemoryStoreSettingsSchema = z.object({
  url: z.url().default('http://127.0.0.1:6333').describe('Qdrant REST endpoint (Qdrant default port 6333).'),
  apiKey: z.string().optional().describe('Qdrant API key, when the server requires one.'),
  collection: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('agentflow_memory')
    .describe('Collection name; created on first use with the vector size below.'),
  dimensions: z.number().int().positive().describe('Vector size of the collection (Qdrant fixes it at creation).'),
  bm25: z
    .object({
      k1: z.number().positive().default(1.2).describe('BM25 k1 (Robertson and Zaragoza 2009; FTS5 uses 1.2 too).'),
      b: z.number().min(0).max(1).default(0.75).describe('BM25 b (Robertson and Zaragoza 2009; FTS5 uses 0.75 too).'),
      averageDocumentLength: z
        .number()
        .positive()
        .default(64)
        .describe(
          'Assumed mean record length in terms; Qdrant applies IDF but not a live mean length. fastembed assumes 256 for passages; a question with a compact trajectory is shorter.',
        ),
    })
    .default({ k1: 1.2, b: 0.75, averageDocumentLength: 64 })
    .describe('BM25 through a sparse vector with the IDF modifier.'),
  fusionDepth: z.number().int().positive().default(100).describe('Hybrid mode: results each list contributes to the fusion.'),
  rrfK: z
    .number()
    .positive()
    .default(RECIPROCAL_RANK_FUSION_K)
    .describe('Reciprocal rank fusion constant (Cormack, Clarke and Büttcher 2009: k = 60).'),
  timeoutMs: z.number().int().positive().default(30_000).describe('Per-request timeout.'),
  // Typed `object`, not QdrantClient, so that these types need no optional peer installed.
  client: z
    .custom<object>((value) => typeof value === 'object' && value !== null, 'expected a QdrantClient')
    .optional()
    .describe(
      'An already configured QdrantClient of @qdrant/js-client-rest (tests, custom transport); url and apiKey are then ignored.',
    ),
});

export type QdrantMemoryStoreSettings = z.input<typeof qdrantMemoryStoreSettingsSchema>;
export type ResolvedQdrantMemoryStoreSettings = z.output<typeof qdrantMemoryStoreSettingsSchema>;

export function parseQdrantMemoryStoreSettings(settings: unknown): ResolvedQdrantMemoryStoreSettings {
  const result = qdrantMemoryStoreSettingsSchema.safeParse(settings);
  if (!result.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid Qdrant memory store settings:\n${formatZodIssues(result.error, 'settings').join('\n')}`,
    });
  }
  return result.data;
}
