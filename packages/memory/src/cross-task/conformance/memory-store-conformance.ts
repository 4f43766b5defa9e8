// Test support, not public API: the one suite every MemoryStore implementation runs.
import { AgentFlowError, type MemoryRecord, type MemoryStore } from '@agentflow/core';
import { afterEach, describe, expect, it } from 'vitest';

/** Every conformance store holds vectors of this size. */
export const CONFORMANCE_DIMENSIONS = 4;

/** Opens a fresh, empty store for one test. */
export type MemoryStoreFactory = (settings: { dimensions: number }) => Promise<MemoryStore>;

const createdAt = '2026-01-02T03:04:05.000Z';

export const conformanceRecords: MemoryRecord[] = [
  {
    id: 'paris',
    question: 'What is the capital of France?',
    trajectory: 'search("capital of France") -> Paris is the capital',
    answer: 'Paris',
    outcome: 1,
    embedding: [1, 0, 0, 0],
    metadata: { dataset: 'geo', tags: ['capital', 'europe'], nested: { level: 2 } },
    createdAt,
  },
  {
    id: 'berlin',
    question: 'What is the capital of Germany?',
    trajectory: 'search("Germany capital") -> Berlin',
    answer: 'Berlin',
    outcome: 1,
    embedding: [0.9, 0.1, 0, 0],
    createdAt,
  },
  {
    id: 'product',
    question: 'What is 17 times 23?',
    trajectory: 'python("17*23") -> 391',
    answer: '391',
    outcome: 0,
    embedding: [0, 0, 1, 0],
    createdAt,
  },
  {
    id: 'nile',
    question: 'How long is the river Nile?',
    trajectory: 'wikipedia("Nile") -> 6650 km',
    answer: '6650 km',
    outcome: 1,
    embedding: [0, 0, 0, 1],
    createdAt,
  },
  {
    id: 'hamlet',
    question: 'Who wrote Hamlet?',
    trajectory: 'search("Hamlet author") -> Shakespeare',
    answer: 'William Shakespeare',
    outcome: 1,
    createdAt,
  },
];

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(AgentFlowError.isInstance(error), `expected an AgentFlowError ${code}, got ${String(error)}`).toBe(true);
  expect((error as AgentFlowError).code).toBe(code);
}

/**
 * Registers the shared MemoryStore conformance tests for one implementation. Every store
 * must pass the same behaviour: round trips, replace-on-same-id, deletes, BM25, vector and
 * hybrid (RRF, k = 60) ranking, minScore filtering, and atomic rejection of bad input.
 */
export function describeMemoryStoreConformance(name: string, factory: MemoryStoreFactory): void {
  describe(`MemoryStore conformance: ${name}`, () => {
    const open: MemoryStore[] = [];
    const fresh = async (): Promise<MemoryStore> => {
      const store = await factory({ dimensions: CONFORMANCE_DIMENSIONS });
      open.push(store);
      return store;
    };
    const filled = async (): Promise<MemoryStore> => {
      const store = await fresh();
      await store.add(conformanceRecords);
      return store;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()));
    });

    it('returns every field of an added record, embeddings at float32 precision', async () => {
      const store = await filled();
      expect(await store.count()).toBe(conformanceRecords.length);
      for (const record of conformanceRecords) {
        const stored = await store.get(record.id);
        const { embedding, ...rest } = record;
        expect(stored).toMatchObject(rest);
        if (embedding) {
          expect(stored?.embedding).toHaveLength(embedding.length);
          for (const [index, value] of (stored?.embedding ?? []).entries()) {
            expect(value).toBeCloseTo(embedding[index] ?? Number.NaN, 6);
          }
        } else {
          expect(stored?.embedding).toBeUndefined();
        }
      }
      expect((await store.get('paris'))?.metadata).toEqual(conformanceRecords[0]?.metadata);
    });

    it('answers undefined for an unknown id and searches of an empty store with nothing', async () => {
      const store = await fresh();
      expect(await store.get('missing')).toBeUndefined();
      expect(await store.count()).toBe(0);
      expect(await store.search({ mode: 'bm25', text: 'capital', k: 3 })).toEqual([]);
      expect(await store.search({ mode: 'vector', embedding: [1, 0, 0, 0], k: 3 })).toEqual([]);
    });

    it('deletes a record everywhere: get, count and every search mode', async () => {
      const store = await filled();
      expect(await store.delete('paris')).toBe(true);
      expect(await store.delete('paris')).toBe(false);
      expect(await store.get('paris')).toBeUndefined();
      expect(await store.count()).toBe(conformanceRecords.length - 1);
      const bm25 = await store.search({ mode: 'bm25', text: 'France Paris', k: 5 });
      const vector = await store.search({ mode: 'vector', embedding: [1, 0, 0, 0], k: 5 });
      const ids = [...bm25, ...vector].map((result) => result.record.id);
      expect(ids).not.toContain('paris');
    });

    it('replaces a record added again under the same id', async () => {
      const store = await filled();
      await store.add([{ ...conformanceRecords[1]!, question: 'Which city hosts the Bundestag?', embedding: [0, 1, 0, 0] }]);
      expect(await store.count()).toBe(conformanceRecords.length);
      expect((await store.get('berlin'))?.question).toBe('Which city hosts the Bundestag?');
      const found = await store.search({ mode: 'bm25', text: 'Bundestag', k: 3 });
      expect(found.map((result) => result.record.id)).toEqual(['berlin']);
      const nearest = await store.search({ mode: 'vector', embedding: [0, 1, 0, 0], k: 1 });
      expect(nearest[0]?.record.id).toBe('berlin');
    });

    it('ranks by BM25 with positive scores, higher first, k respected', async () => {
      const store = await filled();
      const results = await store.search({ mode: 'bm25', text: 'capital of France', k: 5 });
      expect(results[0]?.record.id).toBe('paris');
      expect(results.map((result) => result.record.id)).toContain('berlin');
      for (const [index, result] of results.entries()) {
        expect(result.score).toBeGreaterThan(0);
        if (index > 0) expect(result.score).toBeLessThanOrEqual(results[index - 1]!.score);
      }
      expect(await store.search({ mode: 'bm25', text: 'capital of France', k: 1 })).toHaveLength(1);
      expect(await store.search({ mode: 'bm25', text: 'zebra quantum', k: 5 })).toEqual([]);
      expect(await store.search({ mode: 'bm25', text: '?!', k: 5 })).toEqual([]);
    });

    it('treats search syntax in the query text as plain words', async () => {
      const store = await filled();
      const results = await store.search({ mode: 'bm25', text: 'Hamlet" AND NOT (* NEAR: wrote', k: 3 });
      expect(results[0]?.record.id).toBe('hamlet');
    });

    it('ranks by cosine similarity, skipping records without an embedding', async () => {
      const store = await filled();
      const results = await store.search({ mode: 'vector', embedding: [2, 0, 0, 0], k: 10 });
      expect(results.map((result) => result.record.id).slice(0, 2)).toEqual(['paris', 'berlin']);
      expect(results.map((result) => result.record.id)).not.toContain('hamlet');
      expect(results).toHaveLength(4);
      expect(results[0]?.score).toBeCloseTo(1, 5);
      expect(results[1]?.score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 5);
      expect(results[2]?.score).toBeCloseTo(0, 5);
    });

    it('fuses BM25 and vector ranks by reciprocal rank fusion with k = 60', async () => {
      const store = await filled();
      const results = await store.search({ mode: 'hybrid', text: 'capital Germany', embedding: [0.9, 0.1, 0, 0], k: 3 });
      expect(results[0]?.record.id).toBe('berlin');
      expect(results[0]?.score).toBeCloseTo(2 / 61, 10);
      expect(results[1]?.record.id).toBe('paris');
      expect(results[1]?.score).toBeCloseTo(2 / 62, 10);
    });

    it('drops results below minScore in every mode', async () => {
      const store = await filled();
      const vector = await store.search({ mode: 'vector', embedding: [1, 0, 0, 0], k: 10, minScore: 0.99 });
      expect(vector.map((result) => result.record.id)).toEqual(['paris', 'berlin']);
      const all = await store.search({ mode: 'bm25', text: 'capital France', k: 10 });
      const top = all[0]!.score;
      const bm25 = await store.search({ mode: 'bm25', text: 'capital France', k: 10, minScore: top });
      expect(bm25.map((result) => result.record.id)).toEqual(['paris']);
      const hybrid = await store.search({
        mode: 'hybrid',
        text: 'capital Germany',
        embedding: [0.9, 0.1, 0, 0],
        k: 10,
        minScore: 2 / 61 - 1e-9,
      });
      expect(hybrid.map((result) => result.record.id)).toEqual(['berlin']);
    });

    it('rejects bad records atomically with a clear error', async () => {
      const store = await filled();
      const valid: MemoryRecord = { ...conformanceRecords[2]!, id: 'new-valid' };
      await expectCode(store.add([valid, { ...valid, id: 'bad', outcome: Number.NaN }]), 'INVALID_ARGUMENT');
      await expectCode(store.add([valid, { ...valid, id: 'wide', embedding: [1, 2, 3] }]), 'SHAPE_MISMATCH');
      await expectCode(store.add([{ ...valid, createdAt: 'yesterday' }]), 'INVALID_ARGUMENT');
      await expectCode(store.add([{ ...valid, embedding: [0, 0, 0, 0] }]), 'INVALID_ARGUMENT');
      expect(await store.count()).toBe(conformanceRecords.length);
      expect(await store.get('new-valid')).toBeUndefined();
    });

    it('rejects bad queries with a clear error', async () => {
      const store = await filled();
      await expectCode(store.search({ mode: 'bm25', text: 'x', k: 0 }), 'INVALID_ARGUMENT');
      await expectCode(store.search({ mode: 'vector', text: 'no embedding', k: 3 }), 'INVALID_ARGUMENT');
      await expectCode(store.search({ mode: 'hybrid', embedding: [1, 0, 0, 0], k: 3 }), 'INVALID_ARGUMENT');
      await expectCode(store.search({ mode: 'vector', embedding: [1, 0], k: 3 }), 'SHAPE_MISMATCH');
      await expectCode(store.search({ mode: 'nearest' as 'bm25', text: 'x', k: 3 }), 'INVALID_ARGUMENT');
    });
  });
}
