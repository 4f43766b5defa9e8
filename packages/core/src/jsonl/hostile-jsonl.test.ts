import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentFlowError } from '../errors/agentflow-error';
import { appendJsonl, forEachJsonlRecord, readJsonl } from './jsonl';

// Run-directory JSONL a hostile user (or a damaged disk) hands in (issue 33): each is refused
// with an AgentFlowError naming the file and line, quickly, without reading a huge line whole,
// blocking on a FIFO or growing past a bounded heap. The 700 MB fold runs in a child process
// with a 200 MB heap (AGENTFLOW_JSONL_FOLD set), where holding the file or its records would abort.

const FOLD = process.env.AGENTFLOW_JSONL_FOLD;
const root = mkdtempSync(join(tmpdir(), 'hostile-jsonl-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = (name: string) => join(root, name);

/** The AgentFlowError `read` fails with, and how long it took. */
function refusal(read: () => unknown): { error: AgentFlowError; ms: number } {
  const started = performance.now();
  let caught: unknown;
  try {
    read();
  } catch (error) {
    caught = error;
  }
  const ms = performance.now() - started;
  expect(AgentFlowError.isInstance(caught), String(caught)).toBe(true);
  return { error: caught as AgentFlowError, ms };
}

/** A FIFO at `path`, and a writer that opens it after `seconds`, so that a read that blocked would end then. */
function fifoWithWriter(path: string, seconds: number): ChildProcess {
  execFileSync('mkfifo', [path]);
  return spawn('sh', ['-c', `sleep ${seconds}; printf '{}\\n' > "$0"`, path], { stdio: 'ignore' });
}

describe.skipIf(FOLD)('JSONL records that must not be trusted', () => {
  it('refuses a 50 MB line quickly, naming the file, the line and the cap, before reading it whole', () => {
    const path = file('huge-line.jsonl');
    const fd = openSync(path, 'w');
    writeSync(fd, '{"id":1}\n{"id":2,"completion":"');
    const block = Buffer.alloc(1024 * 1024, 0x61);
    for (let index = 0; index < 50; index++) writeSync(fd, block);
    writeSync(fd, '"}\n{"id":3}\n');
    closeSync(fd);
    const { error, ms } = refusal(() => readJsonl(path));
    expect(error.code).toBe('RECORD_TOO_LARGE');
    expect(error.message).toBe(
      `${path}:2: the record starting at byte 9 is longer than 16 MiB (16777216 bytes), the cap on one line of a JSONL file (maxLineBytes); ` +
        'it was refused before it was read whole. A record that large is not one a run writes: check the file, or raise maxLineBytes if the record is genuine.',
    );
    expect(ms).toBeLessThan(2000);
    // A cap of the caller's own, and a line under it.
    expect(() => readJsonl(path, { maxLineBytes: 1024 })).toThrow(`${path}:2: the record starting at byte 9 is longer than 1 KiB (1024 bytes)`);
    expect(readJsonl(path, { maxLineBytes: 60 * 1024 * 1024 }).map((record) => (record as { id: number }).id)).toEqual([1, 2, 3]);
  });

  it('refuses invalid UTF-8 naming the file, the line and the byte offset, where it used to store replacement characters', () => {
    const path = file('latin1.jsonl');
    writeFileSync(path, Buffer.concat([Buffer.from('{"answer":"ok"}\n{"answer":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]));
    const { error } = refusal(() => readJsonl(path));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(`${path}:2: not UTF-8: byte 0xe9 at offset 30 of the file (byte 15 of the line); write the file as UTF-8.`);
    expect(error.details).toMatchObject({ path, line: 2, offset: 30 });
    // A multi-byte character split by nothing is fine.
    writeFileSync(path, '{"answer":"café ✓"}\n');
    expect(readJsonl(path)).toEqual([{ answer: 'café ✓' }]);
  });

  it('refuses a FIFO without blocking, and a link to /dev/zero without reading it', () => {
    const path = file('trajectories.jsonl');
    const writer = fifoWithWriter(path, 20);
    try {
      const { error, ms } = refusal(() => readJsonl(path));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toBe(`${path} is a FIFO; expected a regular file (JSONL file).`);
      expect(ms).toBeLessThan(2000);
    } finally {
      writer.kill();
    }
    const link = file('labels.jsonl');
    symlinkSync('/dev/zero', link);
    const { error, ms } = refusal(() => forEachJsonlRecord(link, () => {}));
    expect(error.message).toBe(`${link} is a link to a character device; expected a regular file (JSONL file).`);
    expect(ms).toBeLessThan(2000);
  });

  it('refuses a line nested 100,000 deep naming the line, where it used to end in a RangeError', () => {
    const path = file('deep.jsonl');
    writeFileSync(path, `{"ok":true}\n${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
    const { error } = refusal(() => readJsonl(path));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(`${path}:2: the record nests lists and objects more than 512 levels deep (maxDepth); a record of a run nests a few levels.`);
  });

  it('folds records one at a time, ignoring a partial last line, and stops where the callback throws', () => {
    const path = file('fold.jsonl');
    appendJsonl(path, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    writeFileSync(path, `${readFileSync(path, 'utf8')}\n{"n": 4, "cut`);
    let sum = 0;
    const lines: number[] = [];
    const visited = forEachJsonlRecord<{ n: number }>(path, (record, line) => {
      sum += record.n;
      lines.push(line);
    });
    expect([visited, sum, lines]).toEqual([3, 6, [1, 2, 3]]);
    const stop = new Error('enough');
    const seen: number[] = [];
    expect(() =>
      forEachJsonlRecord<{ n: number }>(path, (record) => {
        seen.push(record.n);
        if (record.n === 2) throw stop;
      }),
    ).toThrow(stop);
    expect(seen).toEqual([1, 2]);
    expect(forEachJsonlRecord(file('absent.jsonl'), () => {}, { allowMissing: true })).toBe(0);
  });

  it('folds a 700 MB file of small records in a child process with a 200 MB heap', (context) => {
    const dir = ['/dev/shm', tmpdir()].find((candidate) => existsSync(candidate) && freeBytes(candidate) >= 2 * 1024 ** 3);
    if (dir === undefined) {
      const reason = `needs 2 GB free in /dev/shm or ${tmpdir()} for a 700 MB file`;
      console.warn(`skipped: ${reason}`);
      context.skip(reason);
      return;
    }
    const work = mkdtempSync(join(dir, 'agentflow-fold-'));
    try {
      const path = join(work, 'trajectories.jsonl');
      const expected = writeLargeJsonl(path, 700 * 1024 * 1024);
      const results = join(work, 'fold.json');
      const repository = fileURLToPath(new URL('../../../../', import.meta.url));
      const started = performance.now();
      execFileSync(process.execPath, [join(repository, 'node_modules/vitest/vitest.mjs'), 'run', fileURLToPath(import.meta.url)], {
        cwd: repository,
        env: { ...process.env, AGENTFLOW_JSONL_FOLD: JSON.stringify({ path, results }), NODE_OPTIONS: '--max-old-space-size=200' },
        stdio: 'pipe',
        timeout: 30_000,
      });
      const folded = JSON.parse(readFileSync(results, 'utf8')) as { records: number; sum: number; peakRssBytes: number; ms: number };
      console.info(
        `folded ${expected.bytes} bytes (${folded.records} records) in ${folded.ms.toFixed(0)} ms with a 200 MB heap, ` +
          `peak RSS ${(folded.peakRssBytes / 1024 ** 2).toFixed(0)} MiB; child process in ${(performance.now() - started).toFixed(0)} ms`,
      );
      expect({ records: folded.records, sum: folded.sum }).toEqual({ records: expected.records, sum: expected.sum });
      expect(folded.peakRssBytes).toBeLessThan(600 * 1024 ** 2);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);
});

function freeBytes(path: string): number {
  const stats = statfsSync(path);
  return stats.bavail * stats.bsize;
}

/** Writes records of about 700 bytes until the file holds `bytes`; returns their count and the sum of their `n`. */
function writeLargeJsonl(path: string, bytes: number): { records: number; sum: number; bytes: number } {
  const fd = openSync(path, 'w');
  const padding = 'x'.repeat(640);
  let records = 0;
  let sum = 0;
  let written = 0;
  try {
    while (written < bytes) {
      const lines: string[] = [];
      for (let index = 0; index < 10_000; index++, records++) {
        sum += records % 7;
        lines.push(`{"id":"task-${records}","n":${records % 7},"text":"${padding}"}\n`);
      }
      written += writeSync(fd, lines.join(''));
    }
  } finally {
    closeSync(fd);
  }
  return { records, sum, bytes: written };
}

describe.runIf(FOLD)('folding in a bounded heap (child process)', () => {
  it('folds the file', () => {
    const { path, results } = JSON.parse(FOLD!) as { path: string; results: string };
    let peakRssBytes = process.memoryUsage.rss();
    let sum = 0;
    const started = performance.now();
    const records = forEachJsonlRecord<{ n: number }>(path, (record, line) => {
      sum += record.n;
      if (line % 20_000 === 0) peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss());
    });
    writeFileSync(results, JSON.stringify({ records, sum, peakRssBytes, ms: performance.now() - started }));
  });
});
