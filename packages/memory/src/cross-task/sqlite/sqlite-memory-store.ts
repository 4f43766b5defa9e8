import { createRequire } from 'node:module';
import {
  AgentFlowError,
  type MemoryQuery,
  type MemoryRecord,
  type MemorySearchResult,
  type MemoryStore,
  assertNever,
  requireOptional,
} from '@agentflow/core';
import type Database from 'better-sqlite3';
import { assertEmbeddingSize, parseMemoryQuery, parseMemoryRecords } from '../memory-record-schema';
import { reciprocalRankFusion } from '../reciprocal-rank-fusion';
import { runMigrations } from './migrations';
import { createSqliteBm25Search } from './sqlite-bm25-search';
import { type SqliteMemoryStoreSettings, parseSqliteMemoryStoreSettings } from './sqlite-settings';
import { createSqliteVectorIndex } from './sqlite-vector-index';
import { createClosedGuard } from '../closed-guard';

const require = createRequire(import.meta.url);

/** The part of `sqlite-vec` the store uses. */
interface SqliteVec {
  load(database: Database.Database): void;
}

interface RecordRow {
  row_id: number;
  id: string;
  question: string;
  trajectory: string;
  answer: string;
  outcome: number;
  metadata: string | null;
  created_at: string;
  has_embedding: number;
}

interface RankedRow {
  row: RecordRow;
  score: number;
}

/**
 * Opens (or creates) the embedded cross-task memory: one SQLite file in WAL mode, so any
 * number of readers (in this or other processes) read while one writer writes. Each `add`
 * is one transaction: a process killed mid-add loses that add and nothing else.
 *
 * Scores: `bm25` returns the FTS5 BM25 score negated (positive, higher is better);
 * `vector` returns cosine similarity (1 - sqlite-vec's cosine distance); `hybrid` returns
 * the reciprocal-rank-fusion score (at most 2 / (rrfK + 1)). `minScore` is on that scale.
 */
export function createSqliteMemoryStore(settings: SqliteMemoryStoreSettings): MemoryStore {
  const resolved = parseSqliteMemoryStoreSettings(settings);
  // Optional peers, loaded here so that installing @agentflow/memory builds no native module.
  const openDatabase = requireOptional(() => require('better-sqlite3') as typeof Database, {
    packageName: 'better-sqlite3',
    feature: 'createSqliteMemoryStore',
  });
  let database: Database.Database;
  try {
    database = new openDatabase(resolved.path, { timeout: resolved.busyTimeoutMs });
  } catch (error) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Cannot open the memory database at ${JSON.stringify(resolved.path)}: ${(error as Error).message}`,
      cause: error,
    });
  }
  let vectors: ReturnType<typeof createSqliteVectorIndex>;
  try {
    loadVectorExtension(database);
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${resolved.synchronous.toUpperCase()}`);
    runMigrations(database);
    vectors = createSqliteVectorIndex(database, resolved.dimensions);
  } catch (error) {
    database.close();
    throw error;
  }
  const searchBm25 = createSqliteBm25Search<RecordRow>(database, resolved.bm25Weights);

  const statements = {
    byId: database.prepare(`SELECT * FROM memory_records WHERE id = ?`),
    byRowId: database.prepare(`SELECT * FROM memory_records WHERE row_id = ?`),
    insert: database.prepare(
      `INSERT INTO memory_records (id, question, trajectory, answer, outcome, metadata, created_at, has_embedding)
       VALUES (@id, @question, @trajectory, @answer, @outcome, @metadata, @createdAt, @hasEmbedding)`,
    ),
    deleteRow: database.prepare(`DELETE FROM memory_records WHERE row_id = ?`),
    count: database.prepare(`SELECT COUNT(*) AS count FROM memory_records`),
  };
  const guard = createClosedGuard();
  const assertOpen = guard.assertOpen;

  const removeRow = (row: RecordRow): void => {
    if (row.has_embedding) vectors.delete(row.row_id);
    statements.deleteRow.run(row.row_id);
  };

  const toRecord = (row: RecordRow): MemoryRecord => {
    const record: MemoryRecord = {
      id: row.id,
      question: row.question,
      trajectory: row.trajectory,
      answer: row.answer,
      outcome: row.outcome,
      createdAt: row.created_at,
    };
    const embedding = row.has_embedding ? vectors.read(row.row_id) : undefined;
    if (embedding) record.embedding = embedding;
    if (row.metadata !== null) record.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
    return record;
  };

  const addAll = database.transaction((records: MemoryRecord[]) => {
    for (const record of records) {
      const existing = statements.byId.get(record.id) as RecordRow | undefined;
      if (existing) removeRow(existing);
      const { lastInsertRowid } = statements.insert.run({
        id: record.id,
        question: record.question,
        trajectory: record.trajectory,
        answer: record.answer,
        outcome: record.outcome,
        metadata: record.metadata === undefined ? null : JSON.stringify(record.metadata),
        createdAt: record.createdAt,
        hasEmbedding: record.embedding ? 1 : 0,
      });
      if (record.embedding) vectors.insert(Number(lastInsertRowid), record.embedding);
    }
  });

  const searchVector = (embedding: number[], limit: number): RankedRow[] =>
    vectors.nearest(embedding, limit).flatMap(({ rowId, distance }) => {
      const row = statements.byRowId.get(rowId) as RecordRow | undefined;
      return row ? [{ row, score: 1 - distance }] : [];
    });

  const rank = (query: MemoryQuery): RankedRow[] => {
    switch (query.mode) {
      case 'bm25':
        return searchBm25(query.text ?? '', query.k);
      case 'vector':
        return searchVector(query.embedding ?? [], query.k);
      case 'hybrid': {
        const depth = Math.max(resolved.fusionDepth, query.k);
        const lists = [searchBm25(query.text ?? '', depth), searchVector(query.embedding ?? [], depth)];
        return reciprocalRankFusion(lists, (entry) => entry.row.id, resolved.rrfK).map(({ item, score }) => ({
          row: item.row,
          score,
        }));
      }
      default:
        return assertNever(query.mode, 'memory search mode');
    }
  };

  return {
    async add(records) {
      assertOpen('add');
      const parsed = parseMemoryRecords(records);
      const size = vectors.dimensions() ?? parsed.find((record) => record.embedding)?.embedding?.length;
      for (const record of parsed) {
        if (record.embedding && size !== undefined) {
          assertEmbeddingSize(record.embedding, size, `Record ${JSON.stringify(record.id)}'s embedding`);
        }
      }
      try {
        addAll.immediate(parsed);
      } catch (error) {
        vectors.reset();
        throw error;
      }
    },
    async get(id) {
      assertOpen('get');
      // One snapshot for the row and its vector, even while another connection replaces it.
      return database.transaction(() => {
        const row = statements.byId.get(id) as RecordRow | undefined;
        return row ? toRecord(row) : undefined;
      })();
    },
    async search(query): Promise<MemorySearchResult[]> {
      assertOpen('search');
      const parsed = parseMemoryQuery(query);
      // One read transaction, so the ranked rows and their embeddings come from one snapshot.
      return database.transaction(() =>
        rank(parsed)
          .filter((entry) => parsed.minScore === undefined || entry.score >= parsed.minScore)
          .slice(0, parsed.k)
          .map(({ row, score }) => ({ record: toRecord(row), score })),
      )();
    },
    async delete(id) {
      assertOpen('delete');
      return database.transaction(() => {
        const row = statements.byId.get(id) as RecordRow | undefined;
        if (!row) return false;
        removeRow(row);
        return true;
      })();
    },
    async count() {
      assertOpen('count');
      return (statements.count.get() as { count: number }).count;
    },
    async close() {
      if (guard.closed) return;
      guard.close();
      database.close();
    },
  };
}

function loadVectorExtension(database: Database.Database): void {
  const sqliteVec = requireOptional(() => require('sqlite-vec') as SqliteVec, {
    packageName: 'sqlite-vec',
    feature: 'createSqliteMemoryStore',
  });
  try {
    sqliteVec.load(database);
  } catch (error) {
    throw new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `The sqlite-vec extension did not load (${(error as Error).message}); its npm package ships binaries for linux, macOS and Windows on x64 and arm64 only.`,
      cause: error,
    });
  }
}
