import { AgentFlowError, type MemoryRecord, type MemoryStore, assertNever, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import type { Embedder } from '../embedders/embedder';

/** The planner's example-retrieval config (how many, how good, which search). */
export const exampleRetrievalConfigSchema = z.object({
  k: z
    .number()
    .int()
    .nonnegative()
    .default(3)
    .describe('How many solved tasks to show the planner; 0 turns retrieval off. 3 keeps a few-shot prompt short.'),
  minScore: z
    .number()
    .finite()
    .optional()
    .describe('Drop examples scoring below this, on the scale of the mode (BM25 score, cosine similarity, or RRF score).'),
  mode: z
    .enum(['bm25', 'vector', 'hybrid'])
    .default('bm25')
    .describe('bm25 needs nothing else; vector and hybrid need an embedder.'),
});

/** The config as written by users (defaults applied on parse). */
export type ExampleRetrievalConfig = z.input<typeof exampleRetrievalConfigSchema>;

/** Settings of {@link createExampleRetriever}. */
export interface ExampleRetrieverSettings extends ExampleRetrievalConfig {
  store: MemoryStore;
  /** Embeds the question for vector and hybrid modes. */
  embedder?: Embedder;
}

/** Returns the solved tasks most similar to a question, best first. */
export type ExampleRetriever = (question: string) => Promise<MemoryRecord[]>;

/**
 * Builds the planner's retriever: embeds the question when the mode needs it, searches the
 * store, and returns up to `k` records scoring at least `minScore`.
 */
export function createExampleRetriever(settings: ExampleRetrieverSettings): ExampleRetriever {
  const { store, embedder, ...config } = settings;
  const parsed = exampleRetrievalConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid example retrieval config:\n${formatZodIssues(parsed.error, 'retrieval').join('\n')}`,
    });
  }
  const { k, minScore, mode } = parsed.data;
  if (mode !== 'bm25' && !embedder) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Example retrieval mode "${mode}" needs an embedder; configure one or use mode "bm25".`,
    });
  }
  const embed = async (question: string): Promise<number[]> => {
    const [vector] = await embedder!.embed([question]);
    return vector!;
  };

  return async (question) => {
    if (k === 0 || question.trim() === '') return [];
    const base = { k, ...(minScore === undefined ? {} : { minScore }) };
    switch (mode) {
      case 'bm25':
        return toRecords(await store.search({ ...base, mode, text: question }));
      case 'vector':
        return toRecords(await store.search({ ...base, mode, embedding: await embed(question) }));
      case 'hybrid':
        return toRecords(await store.search({ ...base, mode, text: question, embedding: await embed(question) }));
      default:
        return assertNever(mode, 'example retrieval mode');
    }
  };
}

function toRecords(results: { record: MemoryRecord }[]): MemoryRecord[] {
  return results.map((result) => result.record);
}
