import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Chat servers on 127.0.0.1 for tests, speaking the documented wire formats, so that the real
 * HTTP back ends (`createOllamaModel`, `createOpenAICompatibleModel`) talk to them as to Ollama
 * or DeepSeek. What a reply says is the test's `reply` function; the servers record every request.
 */
export interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  /** Ollama: `format` (a JSON schema or "json"). */
  format?: unknown;
  /** OpenAI: `response_format`. */
  response_format?: { type: string };
  [key: string]: unknown;
}

export interface LoopbackChatServer {
  /** Ollama: the server URL (`http://127.0.0.1:PORT`); OpenAI: the base URL ending in `/v1`. */
  url: string;
  requests: ChatRequestBody[];
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function listen(
  handle: (method: string, path: string, body: unknown, response: ServerResponse, headers: IncomingMessage['headers']) => void,
  urlOf: (port: number) => string,
  requests: ChatRequestBody[],
): Promise<LoopbackChatServer> {
  const server = createServer((request, response) => {
    readJson(request)
      .then((body) => handle(request.method ?? 'GET', request.url ?? '/', body, response, request.headers))
      .catch((error: Error) => sendJson(response, 400, { error: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: urlOf(port),
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Ollama's native API (docs/api.md): `POST /api/chat` without streaming answers
 * `{model, created_at, message: {role, content}, done, done_reason, prompt_eval_count, eval_count}`;
 * `GET /api/tags` lists the served model.
 */
export function startOllamaServer(model: string, reply: (body: ChatRequestBody) => string): Promise<LoopbackChatServer> {
  return startHeldOllamaServer(model, async (body) => reply(body));
}

/**
 * An OpenAI-compatible API as DeepSeek serves it: `POST /v1/chat/completions` answers a
 * `chat.completion` object with `usage`; `GET /v1/models` lists the model. Requests without
 * `authorization: Bearer <apiKey>` get DeepSeek's 401.
 */
export function startOpenAiCompatibleServer(model: string, apiKey: string, reply: (body: ChatRequestBody) => string): Promise<LoopbackChatServer> {
  const requests: ChatRequestBody[] = [];
  let counter = 0;
  const server = listen(
    (method, path, body, response, headers) => {
      if (headers.authorization !== `Bearer ${apiKey}`) {
        sendJson(response, 401, { error: { message: 'Authentication Fails, Your api key is invalid', type: 'authentication_error' } });
        return;
      }
      if (method === 'GET' && path === '/v1/models') {
        sendJson(response, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'loopback' }] });
        return;
      }
      if (method !== 'POST' || path !== '/v1/chat/completions') {
        sendJson(response, 404, { error: { message: `no route ${method} ${path}`, type: 'invalid_request_error' } });
        return;
      }
      const request = body as ChatRequestBody;
      requests.push(request);
      const content = reply(request);
      const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
      const completionTokens = Math.ceil(content.length / 4);
      sendJson(response, 200, {
        id: `chatcmpl-${++counter}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      });
    },
    (port) => `http://127.0.0.1:${port}/v1`,
    requests,
  );
  return server;
}

/**
 * `startOllamaServer` whose reply may wait: `reply` returns a promise, so a test can hold a
 * request open (to kill the client while it waits) or pace the answers. Same wire format,
 * and the request is recorded when it arrives.
 */
export function startHeldOllamaServer(model: string, reply: (body: ChatRequestBody) => Promise<string>): Promise<LoopbackChatServer> {
  const requests: ChatRequestBody[] = [];
  return listen(
    (method, path, body, response) => {
      if (method === 'GET' && path === '/api/tags') {
        sendJson(response, 200, { models: [{ name: model, model, modified_at: new Date(0).toISOString(), size: 0, digest: 'loopback' }] });
        return;
      }
      if (method !== 'POST' || path !== '/api/chat') {
        sendJson(response, 404, { error: `no route ${method} ${path}` });
        return;
      }
      const request = body as ChatRequestBody;
      requests.push(request);
      reply(request)
        .then((content) => {
          if (response.destroyed) return;
          sendJson(response, 200, {
            model: request.model,
            created_at: new Date().toISOString(),
            message: { role: 'assistant', content },
            done: true,
            done_reason: 'stop',
            prompt_eval_count: JSON.stringify(request.messages).length,
            eval_count: content.length,
          });
        })
        .catch((error: Error) => {
          if (!response.destroyed) sendJson(response, 500, { error: error.message });
        });
    },
    (port) => `http://127.0.0.1:${port}`,
    requests,
  );
}
