import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from './openai-embedder';

interface Received {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
  body: { model: string; input: string[]; encoding_format: string; dimensions?: number };
}

const received: Received[] = [];
let respond: (request: Received, response: ServerResponse) => void;
let server: Server;
let baseURL: string;

// Deterministic 3-dimensional "embedding" of a text, so answers can be checked.
const vectorOf = (text: string) => [text.length, text.charCodeAt(0) / 100, 0.5];

// Answers like api.openai.com: data in shuffled index order, usage, object fields.
const openAiAnswer = (request: Received, response: ServerResponse) => {
  const data = request.body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) }));
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      object: 'list',
      data: data.reverse(),
      model: request.body.model,
      usage: { prompt_tokens: 7, total_tokens: 7 },
    }),
  );
};

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry: Received = {
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body: JSON.parse(body),
      };
      received.push(entry);
      respond(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('createOpenAiEmbedder', () => {
  it('speaks the OpenAI embeddings wire format, in batches, in input order', async () => {
    received.length = 0;
    respond = openAiAnswer;
    const embedder = createOpenAiEmbedder({ baseURL, apiKey: 'sk-test', model: 'text-embedding-3-small', dimensions: 3, batchSize: 2 });
    const texts = ['alpha', 'be', 'gamma ray', 'd', 'epsilon'];
    expect(await embedder.embed(texts)).toEqual(texts.map(vectorOf));
    expect(received.map((request) => request.body.input)).toEqual([['alpha', 'be'], ['gamma ray', 'd'], ['epsilon']]);
    expect(received[0]).toEqual({
      method: 'POST',
      url: '/v1/embeddings',
      authorization: 'Bearer sk-test',
      contentType: 'application/json',
      body: { model: 'text-embedding-3-small', input: ['alpha', 'be'], encoding_format: 'float' },
    });
  });

  it('sends dimensions when asked to', async () => {
    received.length = 0;
    respond = openAiAnswer;
    const embedder = createOpenAiEmbedder({ baseURL: `${baseURL}/`, model: 'm', dimensions: 3, sendDimensions: true });
    await embedder.embed(['x']);
    expect(received[0]?.body.dimensions).toBe(3);
    expect(received[0]?.authorization).toBeUndefined();
  });

  it('reports an HTTP error with its status and the server message', async () => {
    respond = (_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
    };
    const embedder = createOpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 });
    const error = await embedder.embed(['x']).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'HTTP_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(/HTTP 401.*Incorrect API key/);
  });

  it('rejects answers of the wrong shape or format', async () => {
    const embedder = createOpenAiEmbedder({ baseURL, model: 'm', dimensions: 4 });
    respond = openAiAnswer;
    await expect(embedder.embed(['x'])).rejects.toThrowError(/3 dimensions for text 0; expected 4/);
    respond = (_request, response) => response.end('<html>proxy error</html>');
    await expect(embedder.embed(['x'])).rejects.toThrowError(/not JSON/);
    respond = (_request, response) => response.end(JSON.stringify({ embeddings: [[1, 2, 3, 4]] }));
    await expect(embedder.embed(['x'])).rejects.toThrowError(/not in the OpenAI format[\s\S]*response\.data/);
  });

  it('reports an unreachable server as a network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const embedder = createOpenAiEmbedder({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', dimensions: 3 });
    await expect(embedder.embed(['x'])).rejects.toSatisfy((error) => AgentFlowError.hasCode(error, 'NETWORK_ERROR'));
  });
});
