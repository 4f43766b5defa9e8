import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBenchmark, loadJsonlBenchmark } from './load-benchmark';

// Benchmark files a hostile or careless user hands in (issue 33): each is refused with an
// AgentFlowError naming the file, what was there and the limit, before it can block the process
// (a FIFO), grow it (/dev/zero, 700 MB, a 50 MB line) or abort it (a line nested 100,000 deep).
// A regression in any of them could hang or kill the test runner, so they run in a child process
// with 512 MB of heap and a timeout (HOSTILE_BENCHMARK_PROBES set), which records what each gave.

const PROBES = process.env.HOSTILE_BENCHMARK_PROBES;
const root = mkdtempSync(join(tmpdir(), 'hostile-benchmark-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Probe {
  code: string;
  message: string;
  ms: number;
  /** Resident memory of the child after the probe, in bytes. */
  rss: number;
}

/** A FIFO at `path` and a writer that opens it after `seconds`: an open that blocked would end then, not never. */
function fifoWithWriter(path: string, seconds: number): ChildProcess {
  execFileSync('mkfifo', [path]);
  return spawn('sh', ['-c', `sleep ${seconds}; printf '[]' > "$0"`, path], { stdio: 'ignore' });
}

describe.skipIf(PROBES)('benchmark files that must not be trusted', () => {
  it('refuses a FIFO, /dev/zero, 700 MB, a 50 MB line and a line 100,000 deep, each in milliseconds and under 1 GB', () => {
    const results = join(root, 'probes.json');
    const repository = fileURLToPath(new URL('../../../../', import.meta.url));
    const started = performance.now();
    try {
      execFileSync(process.execPath, [join(repository, 'node_modules/vitest/vitest.mjs'), 'run', fileURLToPath(import.meta.url)], {
        cwd: repository,
        env: { ...process.env, HOSTILE_BENCHMARK_PROBES: results, NODE_OPTIONS: '--max-old-space-size=512' },
        encoding: 'utf8',
        stdio: 'pipe',
        timeout: 28_000,
      });
    } catch (caught) {
      const { stdout, stderr } = caught as { stdout?: string; stderr?: string };
      throw new Error(`The probes' child process failed: ${(caught as Error).message}\n${String(stdout ?? '').slice(-4000)}${String(stderr ?? '').slice(-4000)}`);
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const probes = JSON.parse(readFileSync(results, 'utf8')) as Record<string, Probe>;
    const dir = readFileSync(join(root, 'probe-dir'), 'utf8');
    expect(probes.fifo).toMatchObject({ code: 'INVALID_ARGUMENT', message: `${dir}/fifo.jsonl: is a FIFO; a benchmark file must be a regular file (.csv, .json or .jsonl).` });
    expect(probes.devZero).toMatchObject({ code: 'INVALID_ARGUMENT', message: '/dev/zero: is a character device; a benchmark file must be a regular file (.csv, .json or .jsonl).' });
    expect(probes.linkToDevZero).toMatchObject({ code: 'INVALID_ARGUMENT', message: `${dir}/zero.csv: is a character device; a benchmark file must be a regular file (.csv, .json or .jsonl).` });
    expect(probes.huge).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: `${dir}/huge.jsonl: is 700 MiB (734003200 bytes); a benchmark file is read whole and may be at most 128 MiB (134217728 bytes). Split it, or raise limits.maxBytes if memory allows.`,
    });
    expect(probes.longLine).toMatchObject({
      code: 'PARSE_ERROR',
      message: `${dir}/long-line.jsonl:2: the line is 50.0 MiB (52428837 bytes), over the cap of 8 MiB (8388608 bytes) per JSONL record (limits.maxLineBytes).`,
    });
    expect(probes.deepLine).toMatchObject({
      code: 'PARSE_ERROR',
      message: `${dir}/deep.jsonl:2: lists and objects nest more than 64 levels deep (line 2, character 65); a benchmark record nests a few levels (limits.maxDepth).`,
    });
    expect(probes.deepJson).toMatchObject({
      code: 'PARSE_ERROR',
      message: `${dir}/deep.json: lists and objects nest more than 64 levels deep (line 1, character 65); a benchmark record nests a few levels (limits.maxDepth).`,
    });
    for (const [name, probe] of Object.entries(probes)) {
      expect(probe.ms, name).toBeLessThan(3000);
      expect(probe.rss, name).toBeLessThan(1024 ** 3);
    }
    console.log(
      `hostile-benchmark-files: ${Object.keys(probes).length} probes refused in a child process in ${seconds} s; ` +
        Object.entries(probes)
          .map(([name, probe]) => `${name} ${probe.ms.toFixed(0)} ms, rss ${(probe.rss / 1024 ** 2).toFixed(0)} MiB`)
          .join('; '),
    );
  }, 30_000);
});

describe.runIf(PROBES)('probes run in a child process with a bounded heap', () => {
  it('records what each probe gives', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hostile-benchmark-probe-'));
    const outcome = (load: () => unknown): Probe => {
      const started = performance.now();
      let error: unknown;
      try {
        load();
      } catch (caught) {
        error = caught;
      }
      const ms = performance.now() - started;
      if (!AgentFlowError.isInstance(error)) throw new Error(`expected an AgentFlowError, got ${String(error)}`);
      return { code: error.code, message: error.message, ms, rss: process.memoryUsage().rss };
    };
    const writer = fifoWithWriter(join(dir, 'fifo.jsonl'), 5);
    symlinkSync('/dev/zero', join(dir, 'zero.csv'));
    // 700 MB without writing 700 MB: a sparse file, its size all stat sees.
    writeFileSync(join(dir, 'huge.jsonl'), '');
    truncateSync(join(dir, 'huge.jsonl'), 700 * 1024 * 1024);
    // One good record, then one whose question is 50 MiB, written in pieces.
    const long = openSync(join(dir, 'long-line.jsonl'), 'w');
    writeSync(long, '{"id":"1","question":"q","answer":"1"}\n{"id":"2","question":"');
    const piece = 'a'.repeat(1024 * 1024);
    for (let index = 0; index < 50; index++) writeSync(long, piece);
    writeSync(long, '","answer":"2"}\n');
    closeSync(long);
    writeFileSync(join(dir, 'deep.jsonl'), `{"id":"1","question":"q","answer":"1"}\n${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
    writeFileSync(join(dir, 'deep.json'), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    try {
      const probes: Record<string, Probe> = {
        fifo: outcome(() => loadBenchmark(join(dir, 'fifo.jsonl'))),
        devZero: outcome(() => loadJsonlBenchmark('/dev/zero')),
        linkToDevZero: outcome(() => loadBenchmark(join(dir, 'zero.csv'))),
        huge: outcome(() => loadBenchmark(join(dir, 'huge.jsonl'))),
        longLine: outcome(() => loadBenchmark(join(dir, 'long-line.jsonl'))),
        deepLine: outcome(() => loadBenchmark(join(dir, 'deep.jsonl'))),
        deepJson: outcome(() => loadBenchmark(join(dir, 'deep.json'))),
      };
      writeFileSync(PROBES!, JSON.stringify(probes));
      writeFileSync(join(PROBES!, '..', 'probe-dir'), dir);
    } finally {
      writer.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 25_000);
});
