import type BetterSqlite3 from 'better-sqlite3';
import { queryTerms, toFtsMatchExpression } from '../search-terms';

export interface Bm25Weights {
  question: number;
  trajectory: number;
  answer: number;
}

export interface Bm25Hit<Row> {
  row: Row;
  /** FTS5 bm25() negated: positive, higher is better. */
  score: number;
}

/**
 * BM25 over the FTS5 index. Terms found in at least half of the records are left out of the
 * query: FTS5 floors their IDF, log((N - n + 0.5) / (n + 0.5)), at 1e-6, so they add nothing
 * to any score, yet an OR over them would score nearly every row ("what", "is", "the").
 * When every term is that common (tiny stores), all terms are kept.
 */
export function createSqliteBm25Search<Row>(database: BetterSqlite3.Database, weights: Bm25Weights) {
  const bm25 = `bm25(memory_fts, ${weights.question}, ${weights.trajectory}, ${weights.answer})`;
  const search = database.prepare(
    `SELECT memory_records.*, -${bm25} AS score
     FROM memory_fts JOIN memory_records ON memory_records.row_id = memory_fts.rowid
     WHERE memory_fts MATCH ? ORDER BY ${bm25} LIMIT ?`,
  );
  const documentFrequency = database.prepare(`SELECT doc FROM memory_fts_vocabulary WHERE term = ?`);
  const total = database.prepare(`SELECT COUNT(*) AS count FROM memory_records`);

  return (text: string, limit: number): Bm25Hit<Row>[] => {
    const terms = queryTerms(text);
    if (terms.length === 0) return [];
    const records = (total.get() as { count: number }).count;
    const weighted = terms.filter((term) => {
      const row = documentFrequency.get(term) as { doc: number } | undefined;
      return row === undefined || 2 * row.doc < records;
    });
    const expression = toFtsMatchExpression(weighted.length > 0 ? weighted : terms);
    return (search.all(expression, limit) as (Row & { score: number })[]).map((row) => ({ row, score: row.score }));
  };
}
