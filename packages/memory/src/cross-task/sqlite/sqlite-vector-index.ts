import { AgentFlowError } from '@agentflow/core';
import type BetterSqlite3 from 'better-sqlite3';
import { assertEmbeddingSize } from '../memory-record-schema';

/** sqlite-vec refuses a KNN query with k above this (vec0 default limit). */
export const SQLITE_VEC_MAX_K = 4096;

const DIMENSIONS_KEY = 'vector_dimensions';

export interface VectorNeighbour {
  rowId: number;
  /** Cosine distance, 1 - cosine similarity, in [0, 2]. */
  distance: number;
}

/**
 * The sqlite-vec `vec0` table of embeddings, keyed by the record's row id. Its vector size is
 * fixed when the table is created, so the table appears with the first embedding (or at open
 * when settings name the size) and the size is kept in `memory_settings`.
 */
export interface SqliteVectorIndex {
  /** The vector size, or undefined while no embedding has been stored. */
  dimensions(): number | undefined;
  /** Creates the table for `dimensions` if needed; throws SHAPE_MISMATCH on another size. */
  ensure(dimensions: number): void;
  insert(rowId: number, embedding: number[]): void;
  delete(rowId: number): void;
  read(rowId: number): number[] | undefined;
  nearest(embedding: number[], k: number): VectorNeighbour[];
  /** Forgets cached state; called after a rolled-back transaction that may have created the table. */
  reset(): void;
}

export function createSqliteVectorIndex(
  database: BetterSqlite3.Database,
  configuredDimensions: number | undefined,
): SqliteVectorIndex {
  const readStored = database.prepare(`SELECT value FROM memory_settings WHERE key = ?`);
  let known: number | undefined;

  const dimensions = (): number | undefined => {
    // Another connection may have created the table since this one opened.
    if (known === undefined) {
      const row = readStored.get(DIMENSIONS_KEY) as { value: string } | undefined;
      known = row ? Number(row.value) : undefined;
    }
    return known;
  };

  const ensure = (size: number): void => {
    const existing = dimensions();
    if (existing !== undefined) {
      if (existing !== size) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `This memory file holds ${existing}-dimensional vectors; got ${size}. Use the same embedder as when the file was created, or a new file.`,
          details: { stored: existing, received: size },
        });
      }
      return;
    }
    database.exec(`CREATE VIRTUAL TABLE memory_vectors USING vec0(embedding float[${size}] distance_metric=cosine)`);
    database.prepare(`INSERT INTO memory_settings (key, value) VALUES (?, ?)`).run(DIMENSIONS_KEY, String(size));
    known = size;
  };

  if (configuredDimensions !== undefined && dimensions() !== configuredDimensions) {
    database.transaction(() => ensure(configuredDimensions)).immediate();
  }

  const toBlob = (embedding: number[]): Buffer => Buffer.from(new Float32Array(embedding).buffer);

  // Prepared once the table exists; preparing per call costs more than the insert itself.
  let prepared: Record<'insert' | 'remove' | 'read' | 'nearest', BetterSqlite3.Statement> | undefined;
  const statements = () => {
    prepared ??= {
      insert: database.prepare(`INSERT INTO memory_vectors (rowid, embedding) VALUES (?, ?)`),
      remove: database.prepare(`DELETE FROM memory_vectors WHERE rowid = ?`),
      read: database.prepare(`SELECT embedding FROM memory_vectors WHERE rowid = ?`),
      nearest: database.prepare(
        `SELECT rowid AS rowId, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance`,
      ),
    };
    return prepared;
  };

  return {
    dimensions,
    ensure,
    insert(rowId, embedding) {
      ensure(embedding.length);
      statements().insert.run(BigInt(rowId), toBlob(embedding));
    },
    delete(rowId) {
      if (dimensions() === undefined) return;
      statements().remove.run(BigInt(rowId));
    },
    read(rowId) {
      if (dimensions() === undefined) return undefined;
      const row = statements().read.get(BigInt(rowId)) as
        | { embedding: Buffer }
        | undefined;
      if (!row) return undefined;
      const blob = row.embedding;
      return Array.from({ length: blob.byteLength / 4 }, (_, index) => blob.readFloatLE(index * 4));
    },
    reset() {
      known = undefined;
      prepared = undefined;
    },
    nearest(embedding, k) {
      const size = dimensions();
      if (size === undefined) return [];
      assertEmbeddingSize(embedding, size, 'query.embedding');
      const rows = statements()
        .nearest.all(toBlob(embedding), Math.min(k, SQLITE_VEC_MAX_K)) as { rowId: number | bigint; distance: number }[];
      return rows.map((row) => ({ rowId: Number(row.rowId), distance: row.distance }));
    },
  };
}
