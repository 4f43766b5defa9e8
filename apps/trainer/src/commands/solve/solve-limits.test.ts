import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parsePositiveSeconds } from '../option-values';
import { type LoopbackServer, ollamaReply, type ScriptedReply, startLoopbackServer } from '../../../../../packages/llm/src/testing/loopback-server';

const cli = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

/** Runs the built CLI as a child process, timed from the spawn (its start-up counts against --time-limit). */
function agentflow(...args: string[]): Promise<{ status: number; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile('node', [cli, ...args], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ status, stdout, stderr, ms: performance.now() - started });
    });
  });
}

const step = (action: string, input: unknown) => ollamaReply(JSON.stringify({ thought: '', action, action_input: input }), 'stop', 'qwen3:8b');
/** What the command may take past its limit: closing down and exiting. */
const marginMs = 1500;

describe('agentflow solve --time-limit holds against misbehaving servers, and replies are capped', () => {
  let server: LoopbackServer;
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
  });
  afterEach(async () => server.close());
  const solve = (...args: string[]) => agentflow('solve', 'What is 6*7?', '--ollama-url', server.url, '--no-python', ...args);

  it('a server that never answers: ends at the limit with TIMEOUT and exit 1', async () => {
    server = await startLoopbackServer(() => ({ kind: 'hang' }));
    const { status, stdout, stderr, ms } = await solve('--time-limit', '2');
    expect(status).toBe(1);
    expect(stdout).toContain('(timeout after 0 steps,');
    expect(stderr).toBe('error [TIMEOUT]: The --time-limit (2 s) ran out after 0 steps, before an answer was written. Raise --time-limit to give it longer.\n');
    expect(ms).toBeLessThan(2000 + marginMs);
  });

  it('a server that answers slowly: the steps it managed, then TIMEOUT at the limit', async () => {
    const corpus = join(mkdtempSync(join(tmpdir(), 'agentflow-solve-limits-')), 'corpus.jsonl');
    writeFileSync(corpus, `${JSON.stringify({ id: '1', title: 'Six', text: 'six times seven' })}\n`);
    let asked = 0;
    server = await startLoopbackServer((): ScriptedReply => ({ ...step('corpus_search', { query: `six ${asked++}` }), delayMs: 700 }) as ScriptedReply);
    const { status, stdout, stderr, ms } = await solve('--corpus', corpus, '--time-limit', '3', '--max-steps', '50');
    expect(status).toBe(1);
    expect(stderr).toMatch(/^error \[TIMEOUT\]: The --time-limit \(3 s\) ran out after \d+ steps?, before an answer was written\./);
    expect(stdout).toMatch(/\(timeout after \d+ steps?, /);
    expect(server.requests.length).toBeGreaterThanOrEqual(1);
    expect(ms).toBeLessThan(3000 + marginMs);
  });

  it('Retry-After: 999999 ends the call at once, naming the value', async () => {
    server = await startLoopbackServer(() => ({ kind: 'json', status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '999999' } }));
    const { status, stderr, ms } = await solve('--time-limit', '3');
    expect(status).toBe(1);
    expect(stderr).toMatch(
      /^error \[RUNTIME_ERROR\]: Planner failed: POST http:\/\/127\.0\.0\.1:\d+\/api\/chat answered HTTP 429 with Retry-After: 999999 \(999999 s\), longer than the [\d.]+ s left of the --time-limit; gave up without waiting \(slow down\)\.\n$/,
    );
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeLessThan(3000 + marginMs);
  });

  it('a 200 MB reply with --max-response-bytes 1048576 ends quickly with RESPONSE_TOO_LARGE, read no further than the cap', async () => {
    server = await startLoopbackServer(() => ({ kind: 'flood', bytes: 200 * 1024 * 1024 }));
    const { status, stdout, stderr, ms } = await solve('--time-limit', '20', '--max-response-bytes', '1048576');
    expect(status).toBe(1);
    expect(stderr).toMatch(
      /^error \[RUNTIME_ERROR\]: Planner failed: POST http:\/\/127\.0\.0\.1:\d+\/api\/chat sent a response body larger than the cap of 1 MiB \(1048576 bytes\) \(read stopped after \d+ bytes\)\. Raise maxResponseBytes if replies this large are expected\. The body began: "\{"model":"m",.*\.\.\."\.\n$/,
    );
    // What the server sent shows only as the error's short quote of its beginning.
    expect(stdout).not.toMatch(/a{300}/);
    expect(stdout.length).toBeLessThan(2000);
    expect(server.requests).toHaveLength(1);
    // The connection was dropped at the cap: the server got out little more than socket buffers.
    expect(server.flooded()).toBeLessThan(32 * 1024 * 1024);
    expect(ms).toBeLessThan(8000);
  });

  it('rejects a --time-limit that is not a positive, finite number with exit 2; a limit past 2^31 ms works', async () => {
    server = await startLoopbackServer(() => step('finish', '42'));
    const junk = await solve('--time-limit', '1e400');
    expect(junk).toMatchObject({ status: 2, stderr: 'error: --time-limit must be a positive, finite number of seconds (e.g. 300 or 2.5), got "1e400".\n' });
    expect(server.requests).toHaveLength(0);
    // 3,000,000 s is 3e9 ms, past setTimeout's 2^31 - 1: once read as "timeout after 0 steps".
    const long = await solve('--time-limit', '3000000');
    expect(long).toMatchObject({ status: 0, stdout: expect.stringContaining('Answer: 42\n(finished after 1 step,') });
  });

  it('exits 1 when the run ends without an answer', async () => {
    server = await startLoopbackServer(() => ({ kind: 'json', status: 404, body: { error: 'no such model' } }));
    server.push(ollamaReply('not json', 'stop', 'qwen3:8b'), ollamaReply('still not json', 'stop', 'qwen3:8b'));
    const { status, stdout, stderr } = await solve('--max-steps', '1');
    expect(stdout).toContain('Answer: (none)\n(max_steps after 1 step,');
    expect(status).toBe(1);
    expect(stderr).toMatch(/^error \[RUNTIME_ERROR\]: No answer after 1 step \(--max-steps\): the planner did not finish and Generator failed: POST .* failed with HTTP 404: no such model; raise --max-steps or add --fixed-modules\.\n$/);
  });
});

describe('parsePositiveSeconds', () => {
  it('takes positive finite seconds, decimals and exponents included', () => {
    expect(['2', '2.5', '.5', '3e9', ' 10 '].map((text) => parsePositiveSeconds('--time-limit', text))).toEqual([2, 2.5, 0.5, 3e9, 10]);
  });

  it('refuses junk, zero, negatives and what overflows to Infinity, naming the option and the value', () => {
    for (const junk of ['abc', '0', '-1', 'Infinity', '1e400', '', '0x10', '5s', 'NaN']) {
      expect(() => parsePositiveSeconds('--time-limit', junk)).toThrow(
        `--time-limit must be a positive, finite number of seconds (e.g. 300 or 2.5), got ${JSON.stringify(junk)}.`,
      );
    }
  });
});
