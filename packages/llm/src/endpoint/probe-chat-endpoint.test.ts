import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '../testing/index';
import { chatEndpointSchema } from './chat-endpoint';
import { assertChatEndpointsAnswer, chatEndpointProbeUrl, probeChatEndpoint } from './probe-chat-endpoint';

const openai = (baseUrl: string) => chatEndpointSchema.parse({ kind: 'openai', baseUrl, model: 'deepseek-chat', apiKeyEnv: 'DEEPSEEK_API_KEY' });

/** A port nothing listens on: one a server held a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('probeChatEndpoint', () => {
  const servers: LoopbackChatServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it("asks Ollama's /api/tags and an OpenAI-compatible API's /models, a trailing slash or not", () => {
    expect(chatEndpointProbeUrl(chatEndpointSchema.parse({ kind: 'ollama', model: 'm', url: 'http://gpu1:11434/' }))).toBe('http://gpu1:11434/api/tags');
    expect(chatEndpointProbeUrl(openai('https://api.deepseek.com/v1'))).toBe('https://api.deepseek.com/v1/models');
  });

  it('finds a running Ollama server reachable', async () => {
    const server = await startOllamaServer('qwen3:8b', () => '');
    servers.push(server);
    const probe = await probeChatEndpoint(chatEndpointSchema.parse({ kind: 'ollama', url: server.url, model: 'qwen3:8b' }), { env: {} });
    expect(probe).toEqual({ ok: true, detail: `${server.url}/api/tags answered 200` });
  });

  it('sends the key when its variable is set, and counts a 401 as reachable while naming the unset variable', async () => {
    const server = await startOpenAiCompatibleServer('deepseek-chat', 'sk-test', () => '');
    servers.push(server);
    expect(await probeChatEndpoint(openai(server.url), { env: { DEEPSEEK_API_KEY: 'sk-test' } })).toEqual({ ok: true, detail: `${server.url}/models answered 200` });
    expect(await probeChatEndpoint(openai(server.url), { env: {} })).toEqual({
      ok: true,
      detail: `${server.url}/models answered 401`,
      missingApiKey: 'environment variable DEEPSEEK_API_KEY is not set',
    });
  });

  it('fails on another HTTP error, and names why an endpoint is unreachable', async () => {
    const answers500: typeof fetch = async () => new Response('down', { status: 500 });
    expect(await probeChatEndpoint(openai('http://gpu1:8000/v1'), { fetch: answers500, env: { DEEPSEEK_API_KEY: 'k' } })).toEqual({
      ok: false,
      detail: 'http://gpu1:8000/v1/models answered HTTP 500',
    });
    const url = `http://127.0.0.1:${await closedPort()}`;
    expect(await probeChatEndpoint(chatEndpointSchema.parse({ kind: 'ollama', url, model: 'm' }))).toEqual({ ok: false, detail: `${url}/api/tags is unreachable (ECONNREFUSED)` });
  });

  it('gives up after timeoutMs', async () => {
    const never: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    const probe = await probeChatEndpoint(openai('http://gpu1:8000/v1'), { fetch: never, env: { DEEPSEEK_API_KEY: 'k' }, timeoutMs: 20 });
    expect(probe).toEqual({ ok: false, detail: 'http://gpu1:8000/v1/models is unreachable (TimeoutError)' });
  });
});

describe('assertChatEndpointsAnswer', () => {
  it('passes endpoints that answer, and refuses the others with a line each naming the model, what the probe got and the key', async () => {
    const server = await startOllamaServer('qwen3:8b', () => '');
    const port = await closedPort();
    try {
      const up = { what: 'fixed modules', key: 'fixedModules', endpoint: chatEndpointSchema.parse({ kind: 'ollama', url: server.url, model: 'qwen3:8b' }) };
      await expect(assertChatEndpointsAnswer([up], { env: {} })).resolves.toBeUndefined();
      const down = { what: 'step judge', key: 'label.endpoint', without: 'label.kind: monte-carlo', endpoint: chatEndpointSchema.parse({ kind: 'ollama', url: `http://127.0.0.1:${port}`, model: 'judge' }) };
      const noKey = { what: 'judge', key: 'judge', endpoint: openai(server.url) };
      const error = await assertChatEndpointsAnswer([up, down, noKey], { env: {} }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'RUNTIME_ERROR', details: { endpoints: ['label.endpoint', 'judge'] } });
      expect((error as Error).message.split('\n')).toEqual([
        `step judge (ollama judge): http://127.0.0.1:${port}/api/tags is unreachable (ECONNREFUSED); start that server or change label.endpoint (its url and model), or set label.kind: monte-carlo.`,
        expect.stringMatching(/^judge \(openai deepseek-chat\): .*; start that server or change judge \(its url and model\)\.$/),
      ]);
    } finally {
      await server.close();
    }
  });
});
