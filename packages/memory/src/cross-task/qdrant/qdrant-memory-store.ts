import {
  AgentFlowError,
  type MemoryQuery,
  type MemoryRecord,
  type MemorySearchResult,
  type MemoryStore,
  assertNever,
  importOptional,
} from '@agentflow/core';
import type { QdrantClient } from '@qdrant/js-client-rest';
import { assertEmbeddingSize, parseMemoryQuery, parseMemoryRecords } from '../memory-record-schema';
import { reciprocalRankFusion } from '../reciprocal-rank-fusion';
import { type SparseVector, encodeBm25Document, encodeBm25Query } from './bm25-sparse-encoder';
import { toPointId } from './point-id';
import {
  type QdrantMemoryStoreSettings,
  type ResolvedQdrantMemoryStoreSettings,
  parseQdrantMemoryStoreSettings,
} from './qdrant-settings';
import { createClosedGuard } from '../closed-guard';

const DENSE = 'embedding';
const SPARSE = 'text';

interface StoredPayload {
  id: string;
  question: string;
  trajectory: string;
  answer: string;
  outcome: number;
  createdAt: string;
  metadata?: Record<string, unknown>;
  /** Length of the embedding as given: Qdrant keeps cosine vectors at unit length. */
  embeddingNorm?: number;
}

interface QdrantPoint {
  payload?: Record<string, unknown> | null;
  vector?: unknown;
  score?: number;
}

/** A client for the settings' URL; the Qdrant client is an optional peer, loaded on first use. */
async function openQdrantClient(resolved: ResolvedQdrantMemoryStoreSettings): Promise<QdrantClient> {
  const { QdrantClient: Client } = await importOptional(() => import('@qdrant/js-client-rest'), {
    packageName: '@qdrant/js-client-rest',
    feature: 'createQdrantMemoryStore',
  });
  return new Client({
    url: resolved.url,
    ...(resolved.apiKey ? { apiKey: resolved.apiKey } : {}),
    timeout: resolved.timeoutMs,
    checkCompatibility: false,
  });
}

/**
 * The cross-task memory on a Qdrant server, behind the same interface as the SQLite store.
 * Vector search uses a named dense vector (cosine); BM25 uses a named sparse vector whose
 * collection applies IDF (`modifier: "idf"`), with term weights computed here; hybrid fuses
 * the two lists by reciprocal rank fusion (k = 60) here, as the SQLite store does. Creates
 * the collection when missing and checks its vector size when present.
 */
export async function createQdrantMemoryStore(settings: QdrantMemoryStoreSettings): Promise<MemoryStore> {
  const resolved = parseQdrantMemoryStoreSettings(settings);
  const client = (resolved.client as QdrantClient | undefined) ?? (await openQdrantClient(resolved));
  const { collection, dimensions } = resolved;

  const call = async <T>(what: string, operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      if (AgentFlowError.isInstance(error)) throw error;
      const status = (error as { status?: number }).status;
      throw new AgentFlowError({
        code: status === undefined ? 'NETWORK_ERROR' : 'HTTP_ERROR',
        message: `Qdrant ${what} on collection ${JSON.stringify(collection)} at ${resolved.url} failed: ${(error as Error).message}`,
        cause: error,
        details: { status, collection },
      });
    }
  };

  await call('collection setup', async () => {
    const { exists } = await client.collectionExists(collection);
    if (!exists) {
      await client.createCollection(collection, {
        vectors: { [DENSE]: { size: dimensions, distance: 'Cosine' } },
        sparse_vectors: { [SPARSE]: { modifier: 'idf' } },
      });
      return;
    }
    const info = await client.getCollection(collection);
    const vectors = info.config.params.vectors as Record<string, { size?: number }> | undefined;
    const size = vectors?.[DENSE]?.size;
    if (size !== dimensions) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Qdrant collection ${JSON.stringify(collection)} has ${size === undefined ? `no "${DENSE}" vector` : `${size}-dimensional vectors`}; this store was configured for ${dimensions}. Use another collection name or the matching embedder.`,
      });
    }
  });

  const guard = createClosedGuard();
  const assertOpen = guard.assertOpen;

  const toRecord = (point: QdrantPoint): MemoryRecord => {
    const payload = point.payload as unknown as StoredPayload;
    const record: MemoryRecord = {
      id: payload.id,
      question: payload.question,
      trajectory: payload.trajectory,
      answer: payload.answer,
      outcome: payload.outcome,
      createdAt: payload.createdAt,
    };
    const vector = (point.vector as Record<string, unknown> | null | undefined)?.[DENSE];
    if (Array.isArray(vector) && payload.embeddingNorm !== undefined) {
      const norm = payload.embeddingNorm;
      record.embedding = (vector as number[]).map((value) => value * norm);
    }
    if (payload.metadata !== undefined) record.metadata = payload.metadata;
    return record;
  };

  const pointOf = (record: MemoryRecord) => {
    const payload: StoredPayload = {
      id: record.id,
      question: record.question,
      trajectory: record.trajectory,
      answer: record.answer,
      outcome: record.outcome,
      createdAt: record.createdAt,
      ...(record.metadata === undefined ? {} : { metadata: record.metadata }),
      ...(record.embedding ? { embeddingNorm: Math.hypot(...record.embedding) } : {}),
    };
    const text = encodeBm25Document(`${record.question} ${record.trajectory} ${record.answer}`, resolved.bm25);
    const vector: Record<string, number[] | SparseVector> = {};
    if (record.embedding) vector[DENSE] = record.embedding;
    if (text.indices.length > 0) vector[SPARSE] = text;
    return { id: toPointId(record.id), vector, payload: payload as unknown as Record<string, unknown> };
  };

  const searchBm25 = async (text: string, limit: number): Promise<QdrantPoint[]> => {
    const sparse = encodeBm25Query(text);
    if (sparse.indices.length === 0) return [];
    const response = await call('BM25 query', () =>
      client.query(collection, { query: sparse, using: SPARSE, limit, with_payload: true, with_vector: [DENSE] }),
    );
    return response.points;
  };

  const searchVector = async (embedding: number[], limit: number): Promise<QdrantPoint[]> => {
    assertEmbeddingSize(embedding, dimensions, 'query.embedding');
    const response = await call('vector query', () =>
      client.query(collection, { query: embedding, using: DENSE, limit, with_payload: true, with_vector: [DENSE] }),
    );
    return response.points;
  };

  const rank = async (query: MemoryQuery): Promise<{ point: QdrantPoint; score: number }[]> => {
    switch (query.mode) {
      case 'bm25':
        return (await searchBm25(query.text ?? '', query.k)).map((point) => ({ point, score: point.score ?? 0 }));
      case 'vector':
        return (await searchVector(query.embedding ?? [], query.k)).map((point) => ({ point, score: point.score ?? 0 }));
      case 'hybrid': {
        const depth = Math.max(resolved.fusionDepth, query.k);
        const lists = await Promise.all([
          searchBm25(query.text ?? '', depth),
          searchVector(query.embedding ?? [], depth),
        ]);
        return reciprocalRankFusion(lists, (point) => String(point.payload?.id), resolved.rrfK).map(
          ({ item, score }) => ({ point: item, score }),
        );
      }
      default:
        return assertNever(query.mode, 'memory search mode');
    }
  };

  return {
    async add(records) {
      assertOpen('add');
      const parsed = parseMemoryRecords(records);
      for (const record of parsed) {
        if (record.embedding) {
          assertEmbeddingSize(record.embedding, dimensions, `Record ${JSON.stringify(record.id)}'s embedding`);
        }
      }
      if (parsed.length === 0) return;
      // One upsert request: Qdrant applies it as one operation of its write-ahead log.
      await call('upsert', () => client.upsert(collection, { wait: true, points: parsed.map(pointOf) }));
    },
    async get(id) {
      assertOpen('get');
      const points = await call('retrieve', () =>
        client.retrieve(collection, { ids: [toPointId(id)], with_payload: true, with_vector: [DENSE] }),
      );
      return points[0] ? toRecord(points[0]) : undefined;
    },
    async search(query): Promise<MemorySearchResult[]> {
      assertOpen('search');
      const parsed = parseMemoryQuery(query);
      return (await rank(parsed))
        .filter((entry) => parsed.minScore === undefined || entry.score >= parsed.minScore)
        .slice(0, parsed.k)
        .map(({ point, score }) => ({ record: toRecord(point), score }));
    },
    async delete(id) {
      assertOpen('delete');
      const pointId = toPointId(id);
      const existing = await call('retrieve', () =>
        client.retrieve(collection, { ids: [pointId], with_payload: false, with_vector: false }),
      );
      if (existing.length === 0) return false;
      await call('delete', () => client.delete(collection, { wait: true, points: [pointId] }));
      return true;
    },
    async count() {
      assertOpen('count');
      return (await call('count', () => client.count(collection, { exact: true }))).count;
    },
    async close() {
      guard.close();
    },
  };
}
