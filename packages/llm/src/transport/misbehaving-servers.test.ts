import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentFlowError } from '@agentflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import { chatEndpointSchema, createChatModel } from '../endpoint/chat-endpoint';
import { createOllamaModel } from '../ollama/ollama-model';
import { createOpenAICompatibleModel } from '../openai/openai-compatible-model';
import { createDeadline } from './deadline';
import { httpSettingsSchema } from './http-settings';

// Fixed-module servers that misbehave (issue 33), each a real HTTP server on loopback: a 200
// of the wrong shape, one that never answers, a 500 with an HTML page, and bodies that never
// end. Each call ends in an AgentFlowError naming the URL, what the server answered (cut short)
// and the setting to change, within the time its settings allow.

const messages = [{ role: 'user' as const, content: 'Is 2 + 2 = 4?' }];

interface Misbehaving {
  url: string;
  /** Requests received so far. */
  requests: () => number;
  close: () => Promise<void>;
}

const servers: Misbehaving[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A node:http server on 127.0.0.1 whose every request (body read first) gets `answer`. */
async function serve(answer: (response: ServerResponse, request: IncomingMessage) => void): Promise<Misbehaving> {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      answer(response, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const misbehaving = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(misbehaving);
  return misbehaving;
}

const json = (status: number, body: unknown) => (response: ServerResponse) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

/** A 200 whose body starts like an Ollama reply and then goes on forever: as fast as the client reads, or `every` ms a piece. */
const endless = (every?: number) => (response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"model":"m","message":{"role":"assistant","content":"');
  if (every !== undefined) {
    const timer = setInterval(() => response.write('tick '), every);
    response.on('close', () => clearInterval(timer));
    return;
  }
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (!response.destroyed && response.write(chunk));
    if (!response.destroyed) response.once('drain', pump);
  };
  pump();
};

/** Runs `call`, returning the AgentFlowError it threw and how long it took. */
async function failure(call: () => Promise<unknown>): Promise<{ error: AgentFlowError; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  const ms = performance.now() - started;
  expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
  return { error: error as AgentFlowError, ms };
}

const ollamaEndpoint = (url: string, timing: Record<string, number> = {}) => createChatModel(chatEndpointSchema.parse({ kind: 'ollama', url, model: 'm', ...timing }));

describe('a fixed-module server that answers 200 with the wrong shape', () => {
  it('Ollama /api/chat answering {"foo":1}: PARSE_ERROR naming the URL, the fields, the body and the url setting, not retried', async () => {
    const server = await serve(json(200, { foo: 1 }));
    const { error, ms } = await failure(() => ollamaEndpoint(server.url).chat({ messages }));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(
      `POST ${server.url}/api/chat answered HTTP 200 with a body that is not an Ollama chat reply ` +
        '(model: Invalid input: expected string, received undefined; message: Invalid input: expected object, received undefined; ' +
        'done: Invalid input: expected boolean, received undefined): {"foo":1}. ' +
        "Check the endpoint's URL (a config's url, or endpoints): it must be an Ollama server, whose native /api/chat answers {model, message, done}; " +
        'an OpenAI-compatible server takes kind openai.',
    );
    expect(server.requests()).toBe(1);
    expect(ms).toBeLessThan(1000);
  });

  it('an OpenAI chat completion with no choices, and a long wrong body quoted to about 200 characters', async () => {
    const server = await serve(json(200, { id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [] }));
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [`${server.url}/v1`] });
    const { error } = await failure(() => model.chat({ messages }));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(
      `POST ${server.url}/v1/chat/completions answered HTTP 200 with a body that is not a chat completion with at least one choice ` +
        '(choices: Too small: expected array to have >=1 items): {"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[]}. ' +
        "Check the endpoint's base URL (a config's baseUrl, or endpoints): it must end before /chat/completions on an OpenAI-compatible server " +
        "(an Ollama server takes kind ollama); a reply without choices may also be the server's refusal, in its log.",
    );
    const verbose = await serve(json(200, { notes: 'x'.repeat(100_000) }));
    const long = await failure(() => ollamaEndpoint(verbose.url).chat({ messages }));
    expect(long.error.message).toContain(': {"notes":"xxxx');
    expect(long.error.message.length).toBeLessThan(900);
  });
});

describe('a fixed-module server that accepts the connection and never answers', () => {
  it("ends after maxRetries + 1 attempts of timeoutMs, saying what it spent, the deadline and the settings (the endpoint's config)", async () => {
    const server = await serve(() => {});
    const model = ollamaEndpoint(server.url, { timeoutMs: 300, maxRetries: 2, totalTimeoutMs: 5000 });
    const { error, ms } = await failure(() => model.chat({ messages }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat failed after 3 attempt\\(s\\) in [\\d.]+ s of the 5 s that the call's totalTimeoutMs allowed; ` +
          'last status: no response \\(no complete response within 300 ms \\(no response headers\\)\\)\\. ' +
          `Check the endpoint's URL \\(${server.url}\\) and that its server answers, or change maxRetries \\(2\\), timeoutMs \\(300 ms an attempt\\) or totalTimeoutMs \\(5000 ms a call\\)\\.$`,
      ),
    );
    expect(error.details).toMatchObject({ url: `${server.url}/api/chat`, attempts: 3, deadline: "the call's totalTimeoutMs" });
    expect(server.requests()).toBe(3);
    // Three attempts of 300 ms and two backoffs of at most 0.5 s and 1 s.
    expect(ms).toBeGreaterThan(850);
    expect(ms).toBeLessThan(3000);
  });

  it('totalTimeoutMs ends the call however many retries are left, and the error says so', async () => {
    const server = await serve(() => {});
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [`${server.url}/v1`], timeoutMs: 300, maxRetries: 100, totalTimeoutMs: 1000, random: () => 0 });
    const { error, ms } = await failure(() => model.chat({ messages }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(
      new RegExp(
        `^POST ${server.url}/v1/chat/completions was stopped: the call's totalTimeoutMs \\(1 s\\) ran out\\. \\d attempt\\(s\\) made in [\\d.]+ s of the 1 s that the call's totalTimeoutMs allowed; ` +
          "last: no response \\(cut short by the call's totalTimeoutMs \\(no response headers\\)\\)\\. " +
          `Check the endpoint's URL \\(${server.url}/v1\\) and that its server answers, or change maxRetries \\(100\\), timeoutMs \\(300 ms an attempt\\) or totalTimeoutMs \\(1000 ms a call\\)\\.$`,
      ),
    );
    expect(ms).toBeGreaterThan(950);
    expect(ms).toBeLessThan(1600);
  });

  it('the defaults bound one call by totalTimeoutMs (600 s), below 5 attempts of 120 s and their backoff (607.5 s)', () => {
    const defaults = httpSettingsSchema.parse({ endpoints: ['http://127.0.0.1:11434'] });
    const backoffCeilings = Array.from({ length: defaults.maxRetries }, (_, round) => Math.min(defaults.maxBackoffMs, defaults.initialBackoffMs * 2 ** round));
    const retries = defaults.timeoutMs * (defaults.maxRetries + 1) + backoffCeilings.reduce((sum, ceiling) => sum + ceiling, 0);
    expect(retries).toBe(607_500);
    expect(defaults.totalTimeoutMs).toBe(600_000);
    expect(Math.min(retries, defaults.totalTimeoutMs)).toBe(600_000);
  });
});

describe('a fixed-module server that answers 500 with an HTML page', () => {
  it('retries, then names the URL and the text of the page, cut to about 200 characters', async () => {
    const page =
      '<!DOCTYPE html><html><head><title>500 Internal Server Error</title><style>body { font-family: sans-serif; }</style></head>' +
      `<body><h1>Internal Server Error</h1><p>The proxy could not reach the upstream model server &amp; gave up.</p><p>${'Details follow. '.repeat(50)}</p></body></html>`;
    const server = await serve((response) => {
      response.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
    });
    const { error, ms } = await failure(() => ollamaEndpoint(server.url, { maxRetries: 1 }).chat({ messages }));
    expect(error.code).toBe('HTTP_ERROR');
    const excerpt = error.message.match(/last status: HTTP 500 \(an HTML page: "(.*?)"\)\. Check the endpoint's URL/)?.[1];
    expect(excerpt).toMatch(/^500 Internal Server Error Internal Server Error The proxy could not reach the upstream model server & gave up\. Details follow\. .*\.\.\.$/);
    expect(excerpt?.length).toBe(200);
    expect(error.message).toMatch(new RegExp(`^POST ${server.url}/api/chat failed after 2 attempt\\(s\\) in [\\d.]+ s of the 600 s that the call's totalTimeoutMs allowed; `));
    expect(error.message).toContain('or change maxRetries (1), timeoutMs (120000 ms an attempt) or totalTimeoutMs (600000 ms a call).');
    expect(server.requests()).toBe(2);
    expect(ms).toBeLessThan(1500);
  });
});

describe('a fixed-module server that streams bytes forever', () => {
  it('as fast as they are read: RESPONSE_TOO_LARGE at maxResponseBytes, quoting how the body began, not retried', async () => {
    const server = await serve(endless());
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxResponseBytes: 64 * 1024, maxRetries: 3 });
    const { error, ms } = await failure(() => model.chat({ messages }));
    expect(error.code).toBe('RESPONSE_TOO_LARGE');
    expect(error.message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat sent a response body larger than the cap of 64 KiB \\(65536 bytes\\) \\(read stopped after \\d+ bytes\\)\\. ` +
          'Raise maxResponseBytes if replies this large are expected\\. The body began: "\\{"model":"m","message":\\{"role":"assistant","content":"a+\\.\\.\\."\\.$',
      ),
    );
    expect(server.requests()).toBe(1);
    expect(ms).toBeLessThan(1000);
  });

  it('a trickle that never ends: each attempt cut at timeoutMs, the error quoting what had arrived', async () => {
    const server = await serve(endless(20));
    const { error, ms } = await failure(() => ollamaEndpoint(server.url, { timeoutMs: 400, maxRetries: 1 }).chat({ messages }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(
      new RegExp(
        `^POST ${server.url}/api/chat failed after 2 attempt\\(s\\) in [\\d.]+ s of the 600 s that the call's totalTimeoutMs allowed; ` +
          'last status: no response \\(no complete response within 400 ms \\(HTTP 200 headers, then \\d+ bytes of body, beginning "\\{"model":"m","message":\\{"role":"assistant","content":"tick tick .*"\\)\\)\\. ',
      ),
    );
    expect(server.requests()).toBe(2);
    // Two attempts of 400 ms and a backoff: seconds, not the call's 600 s (bounds loose for a loaded machine).
    expect(ms).toBeLessThan(5000);
    // Under a run's deadline the trickle is cut there, and the error says by what.
    const run = createDeadline({ timeLimitMs: 700, what: "the run's time limit" });
    const cut = await failure(() => ollamaEndpoint(server.url).chat({ messages, signal: run.signal }));
    expect(cut.error.message).toMatch(
      /was stopped: the run's time limit \(0\.7 s\) ran out\. 1 attempt\(s\) made in \d+\.\d+ s of the \d+\.\d+ s that the run's time limit allowed; last: no response \(cut short by the run's time limit \(HTTP 200 headers, then \d+ bytes of body, beginning "\{"model":"m"/,
    );
    expect(cut.ms).toBeLessThan(5000);
  });
});
