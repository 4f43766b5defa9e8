import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request body as OpenAI documents it (the fields the tests read). */
export interface ChatCompletionsBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
  temperature?: number;
  max_tokens?: number;
}

export interface ServerReply {
  content: string;
  promptTokens: number;
  completionTokens: number;
}

export interface LoopbackServer {
  /** Base URL ending before `/chat/completions`. */
  url: string;
  requests: ChatCompletionsBody[];
  /** Most requests that were being answered at the same time. */
  maxInFlight: number;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An HTTP server on 127.0.0.1 that answers `POST /v1/chat/completions` in the OpenAI wire
 * format (https://platform.openai.com/docs/api-reference/chat/object), with `reply` deciding
 * the content and token usage of each answer.
 */
export async function startOpenAiServer(
  reply: (body: ChatCompletionsBody) => ServerReply,
  settings: { delayMs?: number } = {},
): Promise<LoopbackServer> {
  const requests: ChatCompletionsBody[] = [];
  let counter = 0;
  let inFlight = 0;
  const state = { maxInFlight: 0 };
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}`, type: 'invalid_request_error' } }));
      return;
    }
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const body = JSON.parse(await readBody(request)) as ChatCompletionsBody;
    requests.push(body);
    if (settings.delayMs) await new Promise((resolve) => setTimeout(resolve, settings.delayMs));
    inFlight--;
    const answer = reply(body);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: `chatcmpl-${++counter}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content }, logprobs: null, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: answer.promptTokens,
          completion_tokens: answer.completionTokens,
          total_tokens: answer.promptTokens + answer.completionTokens,
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return state.maxInFlight;
    },
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
