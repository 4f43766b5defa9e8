import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { conformanceRecords, describeMemoryStoreConformance } from '../conformance/memory-store-conformance';
import { createSqliteMemoryStore } from './sqlite-memory-store';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-memory-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCount = 0;
const newPath = () => join(directory, `memory-${++fileCount}.sqlite`);

describeMemoryStoreConformance('SQLite (file, WAL)', async ({ dimensions }) =>
  createSqliteMemoryStore({ path: newPath(), dimensions }),
);
describeMemoryStoreConformance('SQLite (in memory, vector size fixed by first embedding)', async () =>
  createSqliteMemoryStore({ path: ':memory:' }),
);

describe('createSqliteMemoryStore', () => {
  it('keeps records across close and reopen, in WAL mode at the current schema version', async () => {
    const path = newPath();
    const store = createSqliteMemoryStore({ path });
    await store.add(conformanceRecords);
    await store.close();
    const reopened = createSqliteMemoryStore({ path });
    expect(await reopened.count()).toBe(conformanceRecords.length);
    const nearest = await reopened.search({ mode: 'vector', embedding: [1, 0, 0, 0], k: 1 });
    expect(nearest[0]?.record.id).toBe('paris');
    await reopened.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT MAX(version) AS version FROM memory_schema_version').get()).toEqual({ version: 2 });
    raw.close();
  });

  it('leaves out of a BM25 query the words that half the records contain, unless no other word is left', async () => {
    const store = createSqliteMemoryStore({ path: ':memory:' });
    const base = { trajectory: 'none', answer: 'x', outcome: 1, createdAt: '2026-01-01T00:00:00Z' };
    await store.add(
      Array.from({ length: 10 }, (_, index) => ({ ...base, id: `r${index}`, question: `what is item ${index}` })),
    );
    await store.add([{ ...base, id: 'zebra', question: 'what is a zebra' }]);
    const rare = await store.search({ mode: 'bm25', text: 'what is a zebra', k: 20 });
    expect(rare.map((result) => result.record.id)).toEqual(['zebra']);
    const common = await store.search({ mode: 'bm25', text: 'what is', k: 20 });
    expect(common).toHaveLength(11);
    await store.close();
  });

  it('refuses embeddings of another size than the file was created with', async () => {
    const path = newPath();
    const store = createSqliteMemoryStore({ path, dimensions: 4 });
    await store.close();
    expect(() => createSqliteMemoryStore({ path, dimensions: 8 })).toThrowError(/holds 4-dimensional vectors; got 8/);
  });

  it('names the bad setting in the error', () => {
    let caught: unknown;
    try {
      createSqliteMemoryStore({ path: '', dimensions: -3 });
    } catch (error) {
      caught = error;
    }
    expect(AgentFlowError.hasCode(caught, 'INVALID_CONFIG')).toBe(true);
    expect(String((caught as Error).message)).toMatch(/settings\.path[\s\S]*settings\.dimensions/);
  });

  it('refuses calls after close', async () => {
    const store = createSqliteMemoryStore({ path: ':memory:' });
    await store.close();
    await expect(store.count()).rejects.toThrowError(/after close/);
  });

  it('lets a second connection read while the first holds a write transaction open', async () => {
    const path = newPath();
    const writer = createSqliteMemoryStore({ path, busyTimeoutMs: 0 });
    await writer.add(conformanceRecords.slice(0, 2));
    const reader = createSqliteMemoryStore({ path, busyTimeoutMs: 0 });
    const raw = new Database(path);
    raw.exec('BEGIN IMMEDIATE');
    raw.prepare('DELETE FROM memory_records').run();
    // The reader sees the last committed snapshot, not the open write, and never waits.
    expect(await reader.count()).toBe(2);
    expect((await reader.search({ mode: 'bm25', text: 'France', k: 1 }))[0]?.record.id).toBe('paris');
    raw.exec('ROLLBACK');
    raw.close();
    await Promise.all([writer.close(), reader.close()]);
  });
});
