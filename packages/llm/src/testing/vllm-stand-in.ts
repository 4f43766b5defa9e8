import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentFlowError, formatZodIssues, type PolicyGenerateRequest } from '@agentflow/core';
import type { LoraAdapter } from '@agentflow/models';
import { z } from 'zod';
import { createStandInEngine, type StandInEngine } from './vllm-stand-in-engine';

/**
 * A vLLM OpenAI-compatible server on 127.0.0.1 for tests, written from vLLM's documented
 * request and response bodies, that samples with `@agentflow/models`' ONNX model (an optional
 * peer, loaded on the first request) and the LoRA adapters it is told to load, so token ids,
 * log-probs and adapter swaps are real. It serves
 * `POST /v1/completions` (prompt as token ids or text, max_tokens, temperature, top_p, seed,
 * stop, logprobs, return_tokens_as_token_ids, return_token_ids, and a JSON schema as
 * `structured_outputs: {json}` or the older `guided_json`), `POST /v1/load_lora_adapter`
 * {lora_name, lora_path}, `POST /v1/unload_lora_adapter` {lora_name}, `GET /v1/models` and
 * `GET /health`. Log-probs are vLLM's default `raw_logprobs`: the model's own distribution
 * (temperature 1, full vocabulary), whatever the sampling settings and guided decoding did.
 */
export interface VllmStandInSettings {
  /** The base model folder (config.json, weights, tokenizer); read on the first request that needs it. */
  modelDir: string;
  /** The name requests use for the base model (vllm serve --served-model-name); default `modelDir`. */
  servedModelName?: string;
  /** vllm serve --max-lora-rank: adapters of a higher rank are refused (default 16, vLLM's). */
  maxLoraRank?: number;
  /** VLLM_ALLOW_RUNTIME_LORA_UPDATING: without it the adapter endpoints do not exist (404). Default true. */
  allowRuntimeLoraUpdating?: boolean;
  /** Runs before each adapter load: a test holds or fails a load here (a rejection answers 500). */
  beforeLoad?: (name: string, path: string) => Promise<void>;
}

/**
 * What the stand-in did, in order: the adapter swaps (`at`: when they took effect) and the
 * completions (`at`: when the request arrived, with the model it named); `at` is
 * performance.now(), comparable across the stand-ins of one process.
 */
export type StandInEvent = { at: number } & (
  | { kind: 'load'; name: string; path: string }
  | { kind: 'unload'; name: string }
  | { kind: 'completion'; model: string; promptTokens: number; completionTokens: number }
);

export interface VllmStandIn {
  /** The server root, e.g. http://127.0.0.1:40123 (vLLM's routes start with /v1). */
  url: string;
  events: StandInEvent[];
  /** The adapters loaded now, by name. */
  adapters(): string[];
  close(): Promise<void>;
}

const tokenIds = z.array(z.number().int().nonnegative());
const completionRequestSchema = z.object({
  model: z.string(),
  prompt: z.union([tokenIds.min(1), z.array(tokenIds.min(1)).length(1), z.string().min(1)]),
  max_tokens: z.number().int().nonnegative().nullable().default(16),
  temperature: z.number().nonnegative().nullable().default(1),
  top_p: z.number().gt(0).lte(1).nullable().optional(),
  top_k: z.number().int().nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  n: z.literal(1).default(1),
  stream: z.literal(false).optional(),
  logprobs: z.number().int().nonnegative().nullable().optional(),
  return_tokens_as_token_ids: z.boolean().nullable().optional(),
  return_token_ids: z.boolean().nullable().optional(),
  guided_json: z.union([z.string(), z.record(z.string(), z.unknown())]).nullable().optional(),
  structured_outputs: z.object({ json: z.union([z.string(), z.record(z.string(), z.unknown())]).optional() }).nullable().optional(),
});
const loadSchema = z.object({ lora_name: z.string().min(1), lora_path: z.string().min(1) });
const unloadSchema = z.object({ lora_name: z.string().min(1) });

/** A failure answered with `status` and vLLM's error body. */
const httpFailure = (status: number, message: string) =>
  new AgentFlowError({ code: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT', message, details: { status } });

/** The status of a failure: its own, 400 for a request the engine refused (vLLM's BadRequestError), else 500. */
function statusOf(error: unknown): number {
  if (!AgentFlowError.isInstance(error)) return 500;
  if (typeof error.details?.status === 'number') return error.details.status;
  return error.code === 'INVALID_ARGUMENT' ? 400 : 500;
}

const errorType = (status: number) => (status === 404 ? 'NotFoundError' : status === 400 ? 'BadRequestError' : 'InternalServerError');

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' });
  response.end(text);
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw httpFailure(400, `The request body is not JSON: ${text.slice(0, 80)}`);
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw httpFailure(400, formatZodIssues(parsed.error).join('; '));
  return parsed.data;
}

/** Starts a stand-in on a free port of 127.0.0.1. */
export async function startVllmStandIn(settings: VllmStandInSettings): Promise<VllmStandIn> {
  const served = settings.servedModelName ?? settings.modelDir;
  const maxLoraRank = settings.maxLoraRank ?? 16;
  const engine: StandInEngine = createStandInEngine(settings.modelDir);
  const adapters = new Map<string, { adapter: LoraAdapter; path: string }>();
  const events: StandInEvent[] = [];
  const created = Math.floor(Date.now() / 1000);
  let sequence = 0;
  // Requests of one tick that name the same model are sampled as one batch; one batch at a time.
  let batches: Promise<unknown> = Promise.resolve();
  const pending = new Map<string, Array<{ request: PolicyGenerateRequest; resolve: (value: unknown) => void; reject: (error: unknown) => void }>>();

  function sample(model: string, request: PolicyGenerateRequest) {
    return new Promise<Awaited<ReturnType<StandInEngine['generate']>>[number]>((resolve, reject) => {
      const queue = pending.get(model) ?? [];
      if (queue.length === 0) {
        pending.set(model, queue);
        setImmediate(() => {
          const batch = pending.get(model) ?? [];
          pending.delete(model);
          batches = batches.then(async () => {
            try {
              // Looked up when the batch runs: an adapter unloaded meanwhile fails its requests.
              const entry = adapters.get(model);
              if (model !== served && !entry) throw httpFailure(404, `The model \`${model}\` does not exist.`);
              const generations = await engine.generate(batch.map((item) => item.request), entry?.adapter);
              for (const [index, item] of batch.entries()) item.resolve(generations[index]);
            } catch (error) {
              for (const item of batch) item.reject(error);
            }
          });
        });
      }
      queue.push({ request, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  async function completions(body: unknown) {
    const at = performance.now();
    const request = parse(completionRequestSchema, body);
    if (request.model !== served && !adapters.has(request.model)) throw httpFailure(404, `The model \`${request.model}\` does not exist.`);
    const tokenizer = await engine.tokenizer();
    const promptIds = typeof request.prompt === 'string' ? tokenizer.encode(request.prompt) : Array.isArray(request.prompt[0]) ? (request.prompt[0] as number[]) : (request.prompt as number[]);
    const schemaOf = (value: string | Record<string, unknown> | undefined | null) => (typeof value === 'string' ? (JSON.parse(value) as Record<string, unknown>) : (value ?? undefined));
    const jsonSchema = schemaOf(request.structured_outputs?.json) ?? schemaOf(request.guided_json);
    const stop = request.stop === undefined || request.stop === null ? [] : typeof request.stop === 'string' ? [request.stop] : request.stop;
    const generation = await sample(request.model, {
      promptIds,
      maxTokens: request.max_tokens ?? 16,
      temperature: request.temperature ?? 1,
      ...(request.top_p ? { topP: request.top_p } : {}),
      ...(request.top_k && request.top_k > 0 ? { topK: request.top_k } : {}),
      ...(request.seed === undefined || request.seed === null ? {} : { seed: request.seed }),
      ...(stop.length > 0 ? { stop } : {}),
      ...(jsonSchema ? { jsonSchema } : {}),
    });
    events.push({ at, kind: 'completion', model: request.model, promptTokens: promptIds.length, completionTokens: generation.tokenIds.length });
    const asIds = request.return_tokens_as_token_ids === true;
    const tokens = generation.tokenIds.map((id) => (asIds ? `token_id:${id}` : tokenizer.decode([id])));
    const logprobs =
      request.logprobs === undefined || request.logprobs === null
        ? null
        : {
            text_offset: tokens.map((_, index) => tokens.slice(0, index).reduce((sum, token) => sum + (asIds ? 0 : token.length), 0)),
            token_logprobs: generation.logprobs,
            tokens,
            top_logprobs: tokens.map((token, index) => ({ [token]: generation.logprobs[index]! })),
          };
    return {
      id: `cmpl-standin-${++sequence}`,
      object: 'text_completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          text: generation.text,
          logprobs,
          finish_reason: generation.finishReason,
          stop_reason: null,
          prompt_logprobs: null,
          ...(request.return_token_ids ? { prompt_token_ids: promptIds, token_ids: generation.tokenIds } : {}),
        },
      ],
      usage: { prompt_tokens: promptIds.length, completion_tokens: generation.tokenIds.length, total_tokens: promptIds.length + generation.tokenIds.length },
    };
  }

  async function loadAdapter(body: unknown): Promise<string> {
    const { lora_name: name, lora_path: path } = parse(loadSchema, body);
    if (adapters.has(name)) throw httpFailure(400, `The lora adapter '${name}' has already been loaded.`);
    await settings.beforeLoad?.(name, path);
    let adapter: LoraAdapter;
    try {
      adapter = await engine.readAdapter(path);
    } catch (error) {
      throw httpFailure(400, `Loading lora ${name} failed: No adapter found for ${path} (${(error as Error).message})`);
    }
    if (adapter.config.rank > maxLoraRank) {
      throw httpFailure(400, `LoRA rank ${adapter.config.rank} is greater than max_lora_rank ${maxLoraRank}.`);
    }
    adapters.set(name, { adapter, path });
    events.push({ at: performance.now(), kind: 'load', name, path });
    return `Success: LoRA adapter '${name}' added successfully.`;
  }

  function unloadAdapter(body: unknown): string {
    const { lora_name: name } = parse(unloadSchema, body);
    if (!adapters.delete(name)) throw httpFailure(404, `The lora adapter '${name}' cannot be found.`);
    events.push({ at: performance.now(), kind: 'unload', name });
    return `Success: LoRA adapter '${name}' removed successfully.`;
  }

  function models() {
    const card = (id: string, root: string, parent: string | null) => ({ id, object: 'model', created, owned_by: 'vllm', root, parent, permission: [] });
    return {
      object: 'list',
      data: [card(served, settings.modelDir, null), ...[...adapters].map(([name, entry]) => card(name, entry.path, served))],
    };
  }

  async function route(method: string, path: string, body: unknown): Promise<unknown> {
    const runtimeLora = settings.allowRuntimeLoraUpdating ?? true;
    if (method === 'GET' && path === '/health') return '';
    if (method === 'GET' && path === '/v1/models') return models();
    if (method === 'POST' && path === '/v1/completions') return completions(body);
    if (method === 'POST' && path === '/v1/load_lora_adapter' && runtimeLora) return loadAdapter(body);
    if (method === 'POST' && path === '/v1/unload_lora_adapter' && runtimeLora) return unloadAdapter(body);
    throw httpFailure(404, 'Not Found');
  }

  const server = createServer((request, response) => {
    readBody(request)
      .then((body) => route(request.method ?? 'GET', (request.url ?? '/').split('?')[0]!, body))
      .then((reply) => send(response, 200, reply))
      .catch((error: unknown) => {
        const status = statusOf(error);
        const message = error instanceof Error ? error.message : String(error);
        send(response, status, { object: 'error', message, type: errorType(status), param: null, code: status });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    adapters: () => [...adapters.keys()],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await batches.catch(() => undefined);
      await engine.release();
    },
  };
}
