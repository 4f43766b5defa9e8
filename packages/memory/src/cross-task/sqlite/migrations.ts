import { AgentFlowError } from '@agentflow/core';
import type BetterSqlite3 from 'better-sqlite3';

/** One forward step of the schema. Versions start at 1 and increase by one. */
export interface Migration {
  version: number;
  description: string;
  up(database: BetterSqlite3.Database): void;
}

const VERSION_TABLE = 'memory_schema_version';

/** The schema of the cross-task memory. Append new migrations; never edit a shipped one. */
export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'records, FTS5 index kept in sync by triggers, store settings',
    up(database) {
      database.exec(`
        CREATE TABLE memory_records (
          row_id INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          question TEXT NOT NULL,
          trajectory TEXT NOT NULL,
          answer TEXT NOT NULL,
          outcome REAL NOT NULL,
          metadata TEXT,
          created_at TEXT NOT NULL,
          has_embedding INTEGER NOT NULL DEFAULT 0
        );
        CREATE VIRTUAL TABLE memory_fts USING fts5(
          question, trajectory, answer,
          content='memory_records', content_rowid='row_id',
          tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memory_records_after_insert AFTER INSERT ON memory_records BEGIN
          INSERT INTO memory_fts(rowid, question, trajectory, answer)
          VALUES (new.row_id, new.question, new.trajectory, new.answer);
        END;
        CREATE TRIGGER memory_records_after_delete AFTER DELETE ON memory_records BEGIN
          INSERT INTO memory_fts(memory_fts, rowid, question, trajectory, answer)
          VALUES ('delete', old.row_id, old.question, old.trajectory, old.answer);
        END;
        CREATE TRIGGER memory_records_after_update AFTER UPDATE ON memory_records BEGIN
          INSERT INTO memory_fts(memory_fts, rowid, question, trajectory, answer)
          VALUES ('delete', old.row_id, old.question, old.trajectory, old.answer);
          INSERT INTO memory_fts(rowid, question, trajectory, answer)
          VALUES (new.row_id, new.question, new.trajectory, new.answer);
        END;
        CREATE TABLE memory_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
    },
  },
  {
    version: 2,
    description: 'FTS5 vocabulary view, so queries can skip terms that carry no BM25 weight',
    up(database) {
      database.exec(`CREATE VIRTUAL TABLE memory_fts_vocabulary USING fts5vocab(memory_fts, 'row');`);
    },
  },
];

/** The schema version a database is at (0 for a new file). */
export function readSchemaVersion(database: BetterSqlite3.Database): number {
  const table = database
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .get(VERSION_TABLE);
  if (!table) return 0;
  const row = database.prepare(`SELECT MAX(version) AS version FROM ${VERSION_TABLE}`).get() as {
    version: number | null;
  };
  return row.version ?? 0;
}

/**
 * Brings the database to the newest version in `migrations`, all pending steps in one
 * IMMEDIATE transaction: a crash mid-migration leaves the old schema, and two processes
 * opening the same file at once migrate it once (the second waits on the busy timeout).
 */
export function runMigrations(
  database: BetterSqlite3.Database,
  migrations: readonly Migration[] = MEMORY_MIGRATIONS,
  now: () => Date = () => new Date(),
): number {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new AgentFlowError({
        code: 'INTERNAL',
        message: `Migration ${index} has version ${migration.version}; expected ${index + 1}.`,
      });
    }
  });
  const latest = migrations.length;
  // Read without a write lock first: an up-to-date file must open while a writer is busy.
  if (readSchemaVersion(database) === latest) return latest;
  const migrate = database.transaction(() => {
    database.exec(
      `CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    const current = readSchemaVersion(database);
    if (current > latest) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `The memory database is at schema version ${current}, newer than this @agentflow/memory knows (${latest}). Upgrade @agentflow/memory or use another file.`,
        details: { current, latest },
      });
    }
    const record = database.prepare(
      `INSERT INTO ${VERSION_TABLE} (version, description, applied_at) VALUES (?, ?, ?)`,
    );
    for (const migration of migrations.slice(current)) {
      migration.up(database);
      record.run(migration.version, migration.description, now().toISOString());
    }
  });
  migrate.immediate();
  return latest;
}
