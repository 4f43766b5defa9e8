import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { crashRecord } from './__fixtures__/crash-records';
import { createSqliteMemoryStore } from './sqlite-memory-store';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
/** Lets the child process run TypeScript sources (one set of hooks for every package's tests). */
const registerTypescript = fileURLToPath(new URL('../../../../../tools/typescript-hooks/register-typescript.mjs', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'agentflow-memory-crash-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

const BATCH_SIZE = 1000;
const KILL_AT_BATCH = 4;

describe('SQLite memory store crash safety', () => {
  it('loses only the add in flight when the writer is killed with SIGKILL, while another process reads', async () => {
    const path = join(directory, 'crash.sqlite');
    const child = spawn(
      process.execPath,
      ['--import', registerTypescript, join(fixtures, 'crash-writer.ts'), path, String(BATCH_SIZE)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });

    const committed = new Set<number>();
    let begun = -1;
    const readerCounts: number[] = [];
    let reader: ReturnType<typeof createSqliteMemoryStore> | undefined;
    let polling: Promise<void> = Promise.resolve();
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));

    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [word, number] = line.split(' ');
        if (word === 'committed') committed.add(Number(number));
        if (word === 'begin') begun = Number(number);
        if (word === 'committed' && Number(number) === 0) {
          // A second connection, in this process, reads while the child keeps writing.
          reader = createSqliteMemoryStore({ path });
          polling = (async () => {
            while (child.exitCode === null && child.signalCode === null) {
              readerCounts.push(await reader!.count());
              await new Promise((resolve) => setTimeout(resolve, 2));
            }
          })();
        }
        if (word === 'begin' && begun === KILL_AT_BATCH) child.kill('SIGKILL');
      }
    });

    const signal = await exited;
    await polling;
    expect(signal, `writer died on its own: ${stderr}`).toBe('SIGKILL');
    await reader?.close();

    // Every count the reader saw is a whole number of batches, never decreasing.
    expect(readerCounts.length).toBeGreaterThan(0);
    for (const [index, count] of readerCounts.entries()) {
      expect(count % BATCH_SIZE).toBe(0);
      if (index > 0) expect(count).toBeGreaterThanOrEqual(readerCounts[index - 1]!);
    }

    const raw = new Database(path);
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(() => raw.prepare(`INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')`).run()).not.toThrow();
    raw.close();

    const store = createSqliteMemoryStore({ path });
    const lastCommitted = Math.max(...committed);
    const inFlightStored = (await store.get(crashRecord(KILL_AT_BATCH, 0).id)) !== undefined;
    // The add in flight is all there (it committed before the kill landed) or not there at all.
    const completeBatches = lastCommitted + 1 + (inFlightStored ? 1 : 0);
    expect(await store.count()).toBe(completeBatches * BATCH_SIZE);
    for (let batch = 0; batch < completeBatches; batch++) {
      for (const index of [0, 1, BATCH_SIZE / 2, BATCH_SIZE - 1]) {
        const expected = crashRecord(batch, index);
        expect(await store.get(expected.id)).toEqual(expected);
      }
    }
    const searched = await store.search({ mode: 'bm25', text: `batch ${lastCommitted} plus`, k: 1 });
    expect(searched).toHaveLength(1);
    console.info(
      `crash test: ${committed.size} adds committed, writer killed ${inFlightStored ? 'just after' : 'during'} add ${KILL_AT_BATCH}; reader saw ${readerCounts.length} consistent counts`,
    );
    await store.close();
  });
});
