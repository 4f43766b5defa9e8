import { AgentFlowError } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../testing/loopback-server';
import { createOllamaModel } from './ollama-model';

const question = [{ role: 'user' as const, content: 'Say hello.' }];

describe('createOllamaModel against a loopback Ollama server', () => {
  let server: LoopbackServer;
  let delays: number[];
  const fastRetries = () => ({
    sleep: async (ms: number) => {
      delays.push(ms);
    },
    random: () => 0.5,
  });

  beforeEach(async () => {
    server = await startLoopbackServer();
    delays = [];
  });
  afterEach(async () => server.close());

  it('speaks the native /api/chat wire format and reads the documented reply', async () => {
    server.push(ollamaReply('{"greeting":"hello"}', 'stop', 'qwen3:8b'));
    const model = createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url], numCtx: 8192, keepAlive: '5m' });
    const schema = { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'] };
    const response = await model.chat({
      messages: question,
      jsonSchema: schema,
      temperature: 0.2,
      seed: 7,
      maxTokens: 64,
      topP: 0.9,
      stop: ['\n\n'],
    });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/api/chat');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({
      model: 'qwen3:8b',
      messages: question,
      stream: false,
      think: false,
      format: schema,
      options: { temperature: 0.2, seed: 7, num_ctx: 8192, num_predict: 64, top_p: 0.9, stop: ['\n\n'] },
      keep_alive: '5m',
    });
    expect(response).toEqual({
      text: '{"greeting":"hello"}',
      finishReason: 'stop',
      model: 'qwen3:8b',
      usage: { promptTokens: 26, completionTokens: 298 },
    });
    expect(model.provider).toBe('ollama');
  });

  it('reports a reply cut by num_predict as finishReason "length"', async () => {
    server.push(ollamaReply('{"greet', 'length'));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url] });
    expect((await model.chat({ messages: question })).finishReason).toBe('length');
  });

  it('honours Retry-After on 429 and then succeeds', async () => {
    server.push(
      { kind: 'json', status: 429, body: { error: 'server busy' }, headers: { 'retry-after': '3' } },
      ollamaReply('ok'),
    );
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], ...fastRetries() });
    expect((await model.chat({ messages: question })).text).toBe('ok');
    expect(server.requests).toHaveLength(2);
    expect(delays).toEqual([3000]);
  });

  it('retries 500s with exponential backoff and full jitter', async () => {
    server.push(
      { kind: 'json', status: 500, body: { error: 'llama runner process has terminated' } },
      { kind: 'json', status: 503, body: { error: 'loading model' } },
      { kind: 'json', status: 502, body: { error: 'bad gateway' } },
      ollamaReply('ok'),
    );
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], initialBackoffMs: 1000, ...fastRetries() });
    expect((await model.chat({ messages: question })).text).toBe('ok');
    // random() = 0.5 of ceilings 1000, 2000, 4000.
    expect(delays).toEqual([500, 1000, 2000]);
  });

  it('survives a dropped connection, a truncated body and a malformed body', async () => {
    const full = JSON.stringify((ollamaReply('ok') as { body: unknown }).body);
    server.push(
      { kind: 'drop' },
      { kind: 'truncate', text: full },
      { kind: 'raw', text: '{"model": "m", "message": {"role": "assistant", "content": "o' },
      ollamaReply('ok'),
    );
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], ...fastRetries() });
    expect((await model.chat({ messages: question })).text).toBe('ok');
    expect(server.requests).toHaveLength(4);
  });

  it('gives up after the retries with an error naming the URL and the last status', async () => {
    for (let i = 0; i < 3; i++) server.push({ kind: 'json', status: 500, body: { error: 'out of memory' } });
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxRetries: 2, ...fastRetries() });
    const error = await model.chat({ messages: question }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'HTTP_ERROR')).toBe(true);
    expect((error as Error).message).toContain(`${server.url}/api/chat`);
    expect((error as Error).message).toContain('last status: HTTP 500 (out of memory)');
    expect(server.requests).toHaveLength(3);
  });

  it('names the URL when nothing listens there', async () => {
    const closed = await startLoopbackServer();
    const url = closed.url;
    await closed.close();
    const model = createOllamaModel({ model: 'm', endpoints: [url], maxRetries: 1, ...fastRetries() });
    const error = await model.chat({ messages: question }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'NETWORK_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(new RegExp(`POST ${url}/api/chat failed after 2 attempt.*no response.*ECONNREFUSED`));
  });

  it('does not retry a 404 and passes on Ollama\'s message', async () => {
    server.push({ kind: 'json', status: 404, body: { error: 'model "nope" not found, try pulling it first' } });
    const model = createOllamaModel({ model: 'nope', endpoints: [server.url], ...fastRetries() });
    await expect(model.chat({ messages: question })).rejects.toThrow(/HTTP 404: model "nope" not found/);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a 200 body that is not a chat reply', async () => {
    server.push({ kind: 'json', body: { models: [] } });
    const model = createOllamaModel({ model: 'm', endpoints: [server.url] });
    const error = await model.chat({ messages: question }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'PARSE_ERROR')).toBe(true);
    expect((error as Error).message).toContain(`${server.url}/api/chat`);
  });

  it('times out a slow attempt', async () => {
    server.push({ ...ollamaReply('late'), delayMs: 5000 } as never);
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 50, maxRetries: 0 });
    const error = await model.chat({ messages: question }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'TIMEOUT')).toBe(true);
    expect((error as Error).message).toContain('no complete response within 50 ms');
  });

  it('is cancelled through an AbortSignal, without retrying', async () => {
    server.push({ ...ollamaReply('late'), delayMs: 10_000 } as never);
    const model = createOllamaModel({ model: 'm', endpoints: [server.url] });
    const controller = new AbortController();
    const started = Date.now();
    const pending = model.chat({ messages: question, signal: controller.signal }).catch((caught: unknown) => caught);
    // Cancel once the server holds the request.
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    controller.abort();
    const error = await pending;
    expect(AgentFlowError.hasCode(error, 'ABORTED')).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it('serves a list of endpoints in turn and fails over without waiting', async () => {
    const second = await startLoopbackServer(() => ollamaReply('from second'));
    try {
      server.push(ollamaReply('from first'), { kind: 'drop' });
      const model = createOllamaModel({ model: 'm', endpoints: [server.url, second.url], ...fastRetries() });
      const texts: string[] = [];
      for (let i = 0; i < 3; i++) texts.push((await model.chat({ messages: question })).text);
      // Call 1 -> first, call 2 -> second, call 3 -> first (dropped) -> second.
      expect(texts).toEqual(['from first', 'from second', 'from second']);
      expect(server.requests).toHaveLength(2);
      expect(second.requests).toHaveLength(2);
      expect(delays).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('keeps at most `concurrency` requests in flight per endpoint', async () => {
    for (let i = 0; i < 4; i++) server.push({ ...ollamaReply(`r${i}`), delayMs: 40 } as never);
    let active = 0;
    let peak = 0;
    const countingFetch: typeof fetch = async (input, init) => {
      active++;
      peak = Math.max(peak, active);
      try {
        return await fetch(input, init);
      } finally {
        active--;
      }
    };
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], concurrency: 2, fetch: countingFetch });
    const texts = await Promise.all([0, 1, 2, 3].map(() => model.chat({ messages: question }).then((r) => r.text)));
    expect(texts.sort()).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(peak).toBe(2);
  });

  it('rejects bad settings with the offending key', () => {
    expect(() => createOllamaModel({ model: 'm', endpoints: ['not a url'] })).toThrow(/endpoints\.0/);
    expect(() => createOllamaModel({ model: '' })).toThrow(/Invalid Ollama model settings/);
  });
});
