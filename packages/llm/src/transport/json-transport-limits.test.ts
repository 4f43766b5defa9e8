import { AgentFlowError } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOllamaModel } from '../ollama/ollama-model';
import { createOpenAICompatibleModel } from '../openai/openai-compatible-model';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../testing/loopback-server';
import { createDeadline } from './deadline';
import { httpSettingsSchema } from './http-settings';

const messages = [{ role: 'user' as const, content: 'Say hello.' }];

/** Runs `call`, returning what it threw and how long it took. */
async function timed(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, ms: performance.now() - started };
}

describe('one deadline bounds every attempt, backoff and Retry-After wait of a call', () => {
  let server: LoopbackServer;
  afterEach(async () => server.close());

  it('a server that never answers: a 1.5 s run deadline ends the call, whatever timeoutMs and maxRetries say', async () => {
    server = await startLoopbackServer(() => ({ kind: 'hang' }));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 120_000, maxRetries: 4 });
    const run = createDeadline({ timeLimitMs: 1500, what: "the run's time limit" });
    const { error, ms } = await timed(() => model.chat({ messages, signal: run.signal }));
    expect(AgentFlowError.hasCode(error, 'TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat was stopped: the run's time limit \\(1\\.5 s\\) ran out\\. 1 attempt\\(s\\) made in 1\\.\\d+ s of the 1\\.\\d+ s that the run's time limit allowed; ` +
          `last: no response \\(cut short by the run's time limit \\(no response headers\\)\\)\\. Check the endpoint's URL \\(${server.url}\\) and that its server answers, ` +
          'or change maxRetries \\(4\\), timeoutMs \\(120000 ms an attempt\\) or totalTimeoutMs \\(600000 ms a call\\)\\.$',
      ),
    );
    expect(ms).toBeGreaterThan(1400);
    expect(ms).toBeLessThan(2500);
  });

  it('a slow server: attempts cut by timeoutMs and retried, all inside a 2 s deadline', async () => {
    server = await startLoopbackServer(() => ({ ...ollamaReply('late'), delayMs: 10_000 }));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 700, maxRetries: 20, initialBackoffMs: 10 });
    const run = createDeadline({ timeLimitMs: 2000, what: "the run's time limit" });
    const { error, ms } = await timed(() => model.chat({ messages, signal: run.signal }));
    expect(AgentFlowError.hasCode(error, 'TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(
      /the run's time limit \(2 s\) ran out\. [23] attempt\(s\) made in [\d.]+ s of the 2 s that the run's time limit allowed; last: no response \((no complete response within 700 ms|cut short by the run's time limit) \(no response headers\)\)\. /,
    );
    expect(ms).toBeLessThan(3000);
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('totalTimeoutMs bounds a call that has no deadline of its own', async () => {
    server = await startLoopbackServer(() => ({ kind: 'hang' }));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 300, maxRetries: 1000, initialBackoffMs: 1, totalTimeoutMs: 1000 });
    const { error, ms } = await timed(() => model.chat({ messages }));
    expect(AgentFlowError.hasCode(error, 'TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(/the call's totalTimeoutMs \(1 s\) ran out\.|would end past the call's totalTimeoutMs/);
    expect(ms).toBeLessThan(1800);
  });

  it('a Retry-After beyond the time left (seconds or an HTTP date) ends the call at once, naming the value', async () => {
    server = await startLoopbackServer();
    const rateLimited = (retryAfter: string) => ({
      kind: 'json' as const,
      status: 429,
      body: { error: 'slow down' },
      headers: { 'retry-after': retryAfter },
    });
    server.push(rateLimited('999999'));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxRetries: 4 });
    const run = createDeadline({ timeLimitMs: 3000, what: "the run's time limit" });
    const seconds = await timed(() => model.chat({ messages, signal: run.signal }));
    expect(AgentFlowError.hasCode(seconds.error, 'HTTP_ERROR')).toBe(true);
    expect((seconds.error as Error).message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat answered HTTP 429 with Retry-After: 999999 \\(999999 s\\), longer than the 2\\.\\d+ s left of the run's time limit; gave up without waiting \\(slow down\\)\\.$`,
      ),
    );
    expect(seconds.ms).toBeLessThan(1000);
    // Without a run deadline the call's own totalTimeoutMs (10 minutes by default) is what is left.
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
    server.push(rateLimited(inAnHour));
    const date = await timed(() => model.chat({ messages }));
    expect((date.error as Error).message).toContain(`with Retry-After: ${inAnHour} (`);
    expect((date.error as Error).message).toContain("left of the call's totalTimeoutMs");
    expect(date.ms).toBeLessThan(1000);
    expect(server.requests).toHaveLength(2);
  });

  it('a timeoutMs above 2^31 - 1 ms does not overflow into an immediate timeout', async () => {
    server = await startLoopbackServer(() => ({ ...ollamaReply('in time'), delayMs: 200 }));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 2 ** 31 + 5000, totalTimeoutMs: 2 ** 33, maxRetries: 0 });
    const run = createDeadline({ timeLimitMs: 2 ** 32, what: "the run's time limit" });
    await expect(model.chat({ messages, signal: run.signal })).resolves.toMatchObject({ text: 'in time' });
    run.dispose();
  });
});

describe('response bodies are read up to maxResponseBytes', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  it('defaults to 8 MiB', () => {
    expect(httpSettingsSchema.parse({ endpoints: ['http://127.0.0.1:1'] }).maxResponseBytes).toBe(8 * 1024 * 1024);
  });

  it('Ollama: a 200 MB reply with a 1 MiB cap fails fast with RESPONSE_TOO_LARGE, is not retried, and is not held in memory', async () => {
    server.push({ kind: 'flood', bytes: 200 * 1024 * 1024 });
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxResponseBytes: 1024 * 1024, maxRetries: 3 });
    const rssBefore = process.memoryUsage().rss;
    const { error, ms } = await timed(() => model.chat({ messages }));
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(AgentFlowError.hasCode(error, 'RESPONSE_TOO_LARGE')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat sent a response body larger than the cap of 1 MiB \\(1048576 bytes\\) \\(read stopped after \\d+ bytes\\)\\. Raise maxResponseBytes if replies this large are expected\\. ` +
          'The body began: "\\{"model":"m","message":\\{"role":"assistant","content":"a{140,}\\.\\.\\."\\.$',
      ),
    );
    expect(ms).toBeLessThan(2000);
    expect(server.requests).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The connection was dropped: the server could push little more than socket buffers.
    expect(server.flooded()).toBeLessThan(32 * 1024 * 1024);
    expect(rssGrowth).toBeLessThan(100 * 1024 * 1024);
  });

  it('OpenAI-compatible: a flood and a declared content-length over the cap, both refused', async () => {
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [`${server.url}/v1`], maxResponseBytes: 64 * 1024, maxRetries: 2 });
    server.push({ kind: 'flood', bytes: 50 * 1024 * 1024 });
    await expect(model.chat({ messages })).rejects.toThrow(/\/v1\/chat\/completions sent a response body larger than the cap of 64 KiB/);
    const text = JSON.stringify({ padding: 'x'.repeat(100_000) });
    server.push({ kind: 'raw', text, headers: { 'content-length': String(Buffer.byteLength(text)) } });
    await expect(model.chat({ messages })).rejects.toThrow(`(content-length ${Buffer.byteLength(text)}). Raise maxResponseBytes`);
    expect(server.requests).toHaveLength(2);
  });
});
