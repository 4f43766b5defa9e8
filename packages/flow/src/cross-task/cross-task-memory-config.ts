import { resolve } from 'node:path';
import { assertNever, type MemoryStore } from '@agentflow/core';
import { createQdrantMemoryStore, createSqliteMemoryStore } from '@agentflow/memory';
import { z } from 'zod';
import { type CrossTaskMemory, createCrossTaskMemory } from './cross-task-memory';

/**
 * Cross-task memory as a config block names it: where solved tasks are kept (an embedded SQLite
 * file or a Qdrant collection, or none), how many are shown and in how many characters. Only
 * BM25 retrieval can be configured this way: the vector and hybrid modes need an embedder,
 * which is code, not a setting (pass one to {@link createCrossTaskMemory}).
 */
export const crossTaskMemoryConfigSchema = z
  .object({
    crossTask: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('sqlite'),
            path: z.string().min(1).optional().describe('Database file; default memory.sqlite in the run directory. Share one file across runs to carry solved tasks over.'),
          })
          .strict(),
        z
          .object({
            kind: z.literal('qdrant'),
            url: z.string().url().default('http://127.0.0.1:6333').describe('Qdrant REST endpoint.'),
            collection: z.string().min(1).default('agentflow-memory'),
            dimensions: z.number().int().positive().describe('Vector size of the collection (Qdrant fixes it at creation).'),
          })
          .strict(),
      ])
      .nullable()
      .default(null)
      .describe(
        "Cross-task memory (@agentflow/flow createCrossTaskMemory): solved training tasks (collect, DAPO rollouts) are kept, and every run's prompt shows the k most similar as examples. Off (null) by default: the planner's prompt then depends on the question alone. Test tasks are never stored, so an evaluation never sees its own answers. Needs a prompt template that shows examples (policy.prompt kind full).",
      ),
    k: z.number().int().positive().default(3).describe('Solved examples shown per prompt.'),
    mode: z.enum(['bm25', 'vector', 'hybrid']).default('bm25').describe('How similar tasks are found; vector and hybrid need an embedder (not configurable here yet).'),
    budgetChars: z.number().int().positive().default(3000).describe('Character budget of the examples in the prompt.'),
  })
  .strict()
  .refine((memory) => memory.mode === 'bm25', { message: 'memory.mode vector and hybrid need an embedder, which a run config cannot name yet; use bm25', path: ['mode'] });

export type CrossTaskMemoryConfig = z.output<typeof crossTaskMemoryConfigSchema>;

/**
 * The cross-task memory of a parsed {@link crossTaskMemoryConfigSchema} block, its store opened
 * (a SQLite file at `crossTask.path`, else `defaultSqlitePath`; or a Qdrant collection), or
 * undefined when the block turns it off (`crossTask: null`).
 */
export async function openCrossTaskMemory(config: CrossTaskMemoryConfig, settings: { defaultSqlitePath: string }): Promise<CrossTaskMemory | undefined> {
  const { crossTask, k, mode, budgetChars } = config;
  if (crossTask === null) return undefined;
  let store: MemoryStore;
  switch (crossTask.kind) {
    case 'sqlite':
      store = createSqliteMemoryStore({ path: resolve(crossTask.path ?? settings.defaultSqlitePath) });
      break;
    case 'qdrant':
      store = await createQdrantMemoryStore({ url: crossTask.url, collection: crossTask.collection, dimensions: crossTask.dimensions });
      break;
    default:
      return assertNever(crossTask, 'memory kind');
  }
  return createCrossTaskMemory({ store, k, mode, budgetChars });
}
