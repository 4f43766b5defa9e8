import { AgentFlowError, type MemoryRecord } from '@agentflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import { conformanceRecords } from '../cross-task/conformance/memory-store-conformance';
import { createSqliteMemoryStore } from '../cross-task/sqlite/sqlite-memory-store';
import { createFunctionEmbedder } from '../embedders/function-embedder';
import { createExampleRetriever } from './example-retriever';

// A tiny real embedder: counts of a few topic words, enough to tell the topics apart.
const topics = ['capital', 'times', 'river', 'wrote'];
const embedded: string[] = [];
const topicEmbedder = createFunctionEmbedder({
  dimensions: topics.length,
  embed: async (texts) => {
    embedded.push(...texts);
    return texts.map((text) => topics.map((topic) => (text.toLowerCase().includes(topic) ? 1 : 0.01)));
  },
});

const stores: ReturnType<typeof createSqliteMemoryStore>[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function storeWithTopics() {
  const store = createSqliteMemoryStore({ path: ':memory:' });
  stores.push(store);
  const questions = conformanceRecords.map((record) => record.question);
  const vectors = await topicEmbedder.embed(questions);
  await store.add(conformanceRecords.map((record, index): MemoryRecord => ({ ...record, embedding: vectors[index] })));
  embedded.length = 0;
  return store;
}

describe('createExampleRetriever', () => {
  it('returns the most similar solved tasks by BM25 by default, at most k', async () => {
    const retrieve = createExampleRetriever({ store: await storeWithTopics(), k: 2 });
    const examples = await retrieve('What is the capital city of Germany?');
    expect(examples.map((record) => record.id)).toEqual(['berlin', 'paris']);
    expect(embedded).toEqual([]);
  });

  it('applies minScore', async () => {
    const store = await storeWithTopics();
    const all = await store.search({ mode: 'bm25', text: 'capital of Germany', k: 5 });
    const retrieve = createExampleRetriever({ store, k: 5, minScore: all[0]!.score });
    expect((await retrieve('capital of Germany')).map((record) => record.id)).toEqual(['berlin']);
  });

  it('embeds the question for vector and hybrid search', async () => {
    const store = await storeWithTopics();
    const vector = createExampleRetriever({ store, k: 1, mode: 'vector', embedder: topicEmbedder });
    expect((await vector('Which river is longest?')).map((record) => record.id)).toEqual(['nile']);
    const hybrid = createExampleRetriever({ store, k: 1, mode: 'hybrid', embedder: topicEmbedder });
    expect((await hybrid('Who wrote Hamlet, and what is 17 times 23?')).map((record) => record.id)).toHaveLength(1);
    expect(embedded).toEqual(['Which river is longest?', 'Who wrote Hamlet, and what is 17 times 23?']);
  });

  it('returns nothing for k = 0 or a blank question without touching the store', async () => {
    const store = await storeWithTopics();
    expect(await createExampleRetriever({ store, k: 0 })('capital')).toEqual([]);
    expect(await createExampleRetriever({ store })('   ')).toEqual([]);
  });

  it('refuses vector or hybrid mode without an embedder, and bad numbers', async () => {
    const store = await storeWithTopics();
    expect(() => createExampleRetriever({ store, mode: 'hybrid' })).toThrowError(/needs an embedder/);
    let caught: unknown;
    try {
      createExampleRetriever({ store, k: -1 });
    } catch (error) {
      caught = error;
    }
    expect(AgentFlowError.hasCode(caught, 'INVALID_CONFIG')).toBe(true);
    expect((caught as Error).message).toMatch(/retrieval\.k/);
  });
});
