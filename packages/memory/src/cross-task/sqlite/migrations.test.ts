import { AgentFlowError } from '@agentflow/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MEMORY_MIGRATIONS, type Migration, readSchemaVersion, runMigrations } from './migrations';

const addColumn: Migration = {
  version: 3,
  description: 'test: a source column',
  up: (database) => database.exec(`ALTER TABLE memory_records ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown'`),
};

describe('runMigrations', () => {
  it('creates the schema on a new file and records each version once', () => {
    const database = new Database(':memory:');
    expect(readSchemaVersion(database)).toBe(0);
    expect(runMigrations(database)).toBe(MEMORY_MIGRATIONS.length);
    expect(runMigrations(database)).toBe(MEMORY_MIGRATIONS.length);
    const rows = database.prepare('SELECT version FROM memory_schema_version').all();
    expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
    database.close();
  });

  it('upgrades an older file in place and keeps its rows', () => {
    const database = new Database(':memory:');
    runMigrations(database);
    database
      .prepare(`INSERT INTO memory_records (id, question, trajectory, answer, outcome, created_at) VALUES ('a', 'q', 't', 'x', 1, 'now')`)
      .run();
    expect(runMigrations(database, [...MEMORY_MIGRATIONS, addColumn])).toBe(3);
    expect(database.prepare('SELECT id, source FROM memory_records').all()).toEqual([{ id: 'a', source: 'unknown' }]);
    database.close();
  });

  it('upgrades a version-1 file so its existing rows appear in the FTS5 vocabulary', () => {
    const database = new Database(':memory:');
    runMigrations(database, MEMORY_MIGRATIONS.slice(0, 1));
    database
      .prepare(`INSERT INTO memory_records (id, question, trajectory, answer, outcome, created_at) VALUES ('a', 'zebra', 't', 'x', 1, 'now')`)
      .run();
    expect(runMigrations(database)).toBe(2);
    expect(database.prepare(`SELECT doc FROM memory_fts_vocabulary WHERE term = 'zebra'`).get()).toEqual({ doc: 1 });
    database.close();
  });

  it('rolls back every pending step when one fails', () => {
    const database = new Database(':memory:');
    const failing: Migration = { version: 3, description: 'broken', up: (db) => db.exec('SELECT * FROM missing_table') };
    expect(() => runMigrations(database, [...MEMORY_MIGRATIONS, failing])).toThrow(/missing_table/);
    expect(readSchemaVersion(database)).toBe(0);
    expect(database.prepare(`SELECT name FROM sqlite_master WHERE name = 'memory_records'`).get()).toBeUndefined();
    database.close();
  });

  it('refuses a file written by a newer version', () => {
    const database = new Database(':memory:');
    runMigrations(database, [...MEMORY_MIGRATIONS, addColumn]);
    let caught: unknown;
    try {
      runMigrations(database);
    } catch (error) {
      caught = error;
    }
    expect(AgentFlowError.hasCode(caught, 'INVALID_CONFIG')).toBe(true);
    expect((caught as Error).message).toMatch(/schema version 3, newer than .* \(2\)/);
    database.close();
  });
});
