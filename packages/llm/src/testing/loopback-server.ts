import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support (not exported): an HTTP server on 127.0.0.1 that answers each request with
 * the next scripted reply and records what it received. Speaks plain HTTP/1.1, so the
 * models under test go through their real fetch, headers and body parsing.
 */
export type ScriptedReply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'raw'; status?: number; text: string; headers?: Record<string, string> }
  /** Headers and half the body are sent, then the socket is destroyed. */
  | { kind: 'truncate'; status?: number; text: string }
  /** The socket is destroyed before any byte of the response. */
  | { kind: 'drop' }
  /** The request is read and never answered (until the server closes). */
  | { kind: 'hang' }
  /**
   * A 200 whose body streams `bytes` bytes (the start of an Ollama reply, then "a"s) in
   * chunks, without content-length, respecting backpressure; `flooded` counts what went out.
   */
  | { kind: 'flood'; bytes: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface LoopbackServer {
  url: string;
  requests: RecordedRequest[];
  /** Bytes of `flood` bodies written so far (a client that stops reading stops this). */
  flooded(): number;
  /** Adds replies to the script; when it runs out, `fallback` answers (default: 500). */
  push(...replies: ScriptedReply[]): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(fallback?: (request: RecordedRequest) => ScriptedReply): Promise<LoopbackServer> {
  const script: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let flooded = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      const recorded = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body };
      requests.push(recorded);
      const reply = script.shift() ??
        fallback?.(recorded) ?? { kind: 'json', status: 500, body: { error: 'script exhausted' } };
      switch (reply.kind) {
        case 'drop':
          request.socket.destroy();
          return;
        case 'hang':
          return;
        case 'flood': {
          response.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(64 * 1024, 'a');
          let left = reply.bytes;
          const pump = () => {
            if (left === reply.bytes) {
              const head = Buffer.from('{"model":"m","message":{"role":"assistant","content":"');
              response.write(head);
              left -= head.length;
            }
            while (left > 0 && !response.destroyed) {
              const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
              left -= piece.length;
              flooded += piece.length;
              if (!response.write(piece)) {
                response.once('drain', pump);
                return;
              }
            }
            if (!response.destroyed) response.end();
          };
          pump();
          return;
        }
        case 'truncate': {
          const bytes = Buffer.from(reply.text);
          response.writeHead(reply.status ?? 200, {
            'content-type': 'application/json',
            'content-length': String(bytes.length),
          });
          response.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => request.socket.destroy());
          return;
        }
        case 'raw':
          response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
          response.end(reply.text);
          return;
        case 'json': {
          const send = () => {
            if (response.destroyed) return;
            response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
            response.end(JSON.stringify(reply.body));
          };
          if (reply.delayMs) setTimeout(send, reply.delayMs);
          else send();
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    flooded: () => flooded,
    push: (...replies) => script.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const fixtures = new URL('../__fixtures__/', import.meta.url);
const ollamaFixture = JSON.parse(readFileSync(new URL('ollama-chat-response.json', fixtures), 'utf8')) as Record<
  string,
  unknown
>;
const openAIFixture = JSON.parse(readFileSync(new URL('openai-chat-completion.json', fixtures), 'utf8')) as {
  choices: Array<Record<string, unknown> & { message: Record<string, unknown> }>;
} & Record<string, unknown>;

/** Ollama's documented non-streaming chat reply with `content` swapped in. */
export function ollamaReply(content: string, doneReason = 'stop', model = 'llama3.2'): ScriptedReply {
  return {
    kind: 'json',
    body: { ...ollamaFixture, model, message: { role: 'assistant', content }, done_reason: doneReason },
  };
}

/** OpenAI's documented chat completion with `content` swapped in. */
export function openAIReply(content: string, finishReason = 'stop'): ScriptedReply {
  const choice = openAIFixture.choices[0]!;
  return {
    kind: 'json',
    body: {
      ...openAIFixture,
      choices: [{ ...choice, message: { ...choice.message, content }, finish_reason: finishReason }],
    },
  };
}

/** The raw text of a fixture file. */
export function readFixture(name: string): string {
  return readFileSync(new URL(name, fixtures), 'utf8');
}
