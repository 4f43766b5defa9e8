/** A solved task kept across tasks, retrieved as an example for the planner. */
export interface MemoryRecord {
  id: string;
  question: string;
  /** A compact rendering of the trajectory (actions and key results). */
  trajectory: string;
  answer: string;
  /** Outcome reward of that trajectory (1 correct, 0 wrong by default). */
  outcome: number;
  embedding?: number[];
  metadata?: Record<string, unknown>;
  /** ISO-8601 time the record was written. */
  createdAt: string;
}

export type MemorySearchMode = 'bm25' | 'vector' | 'hybrid';

export interface MemoryQuery {
  text?: string;
  embedding?: number[];
  /** How many records to return at most. */
  k: number;
  mode: MemorySearchMode;
  /** Drop results scoring below this (scale depends on the mode). */
  minScore?: number;
}

export interface MemorySearchResult {
  record: MemoryRecord;
  score: number;
}

/** Cross-task memory. Implementations: embedded SQLite, Qdrant. */
export interface MemoryStore {
  add(records: MemoryRecord[]): Promise<void>;
  get(id: string): Promise<MemoryRecord | undefined>;
  search(query: MemoryQuery): Promise<MemorySearchResult[]>;
  delete(id: string): Promise<boolean>;
  count(): Promise<number>;
  close(): Promise<void>;
}
