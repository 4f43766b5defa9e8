import { AgentFlowError, describeValue, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { type Embedder, checkEmbeddings, embedInBatches } from './embedder';

const openAiEmbedderSettingsSchema = z.object({
  baseURL: z
    .url()
    .default('https://api.openai.com/v1')
    .describe('API root; `/embeddings` is appended (OpenAI, vLLM, Ollama /v1, LM Studio, TEI all serve it).'),
  apiKey: z.string().optional().describe('Sent as `Authorization: Bearer <apiKey>` when set.'),
  model: z.string().min(1).describe('Model name the server knows, e.g. "text-embedding-3-small".'),
  dimensions: z.number().int().positive().describe('Size of the vectors the model returns (checked on every answer).'),
  sendDimensions: z
    .boolean()
    .default(false)
    .describe('Also send `dimensions` in the request, for models that can shorten their vectors (text-embedding-3-*).'),
  batchSize: z
    .number()
    .int()
    .positive()
    .max(2048)
    .default(64)
    .describe('Texts per request (the OpenAI API accepts at most 2048 inputs per request).'),
  timeoutMs: z.number().int().positive().default(60_000).describe('Abort a request after this long.'),
  headers: z.record(z.string(), z.string()).default({}).describe('Extra HTTP headers for every request.'),
  fetch: z
    .custom<typeof fetch>((value) => typeof value === 'function', 'expected a fetch function')
    .optional()
    .describe('Injected fetch (tests, proxies); the global fetch by default.'),
});

/** Settings of {@link createOpenAiEmbedder}. */
export type OpenAiEmbedderSettings = z.input<typeof openAiEmbedderSettingsSchema>;

// The documented response of POST /v1/embeddings with encoding_format "float".
const embeddingsResponseSchema = z.object({
  object: z.literal('list').optional(),
  data: z.array(
    z.object({
      object: z.literal('embedding').optional(),
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number()),
    }),
  ),
  model: z.string().optional(),
});

/**
 * An embedder that calls an OpenAI-compatible `POST {baseURL}/embeddings` endpoint with
 * `{ model, input: string[], encoding_format: "float" }` and reorders the answer by `index`.
 */
export function createOpenAiEmbedder(settings: OpenAiEmbedderSettings): Embedder {
  const parsed = openAiEmbedderSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid OpenAI embedder settings:\n${formatZodIssues(parsed.error, 'settings').join('\n')}`,
    });
  }
  const resolved = parsed.data;
  const fetchFunction = resolved.fetch ?? globalThis.fetch;
  const url = `${resolved.baseURL.replace(/\/+$/, '')}/embeddings`;

  const request = async (input: string[]): Promise<number[][]> => {
    const body: Record<string, unknown> = { model: resolved.model, input, encoding_format: 'float' };
    if (resolved.sendDimensions) body.dimensions = resolved.dimensions;
    let response: Response;
    try {
      response = await fetchFunction(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(resolved.apiKey ? { authorization: `Bearer ${resolved.apiKey}` } : {}),
          ...resolved.headers,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(resolved.timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new AgentFlowError({
        code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
        message: timedOut
          ? `Embedding request to ${url} took longer than ${resolved.timeoutMs} ms.`
          : `Embedding request to ${url} failed: ${(error as Error).message}`,
        cause: error,
        details: { url },
      });
    }
    const text = await response.text();
    if (!response.ok) {
      throw new AgentFlowError({
        code: 'HTTP_ERROR',
        message: `Embedding request to ${url} answered HTTP ${response.status}: ${describeValue(text, 300)}`,
        details: { url, status: response.status },
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `Embedding response from ${url} is not JSON: ${describeValue(text, 200)}`,
        cause: error,
      });
    }
    const result = embeddingsResponseSchema.safeParse(json);
    if (!result.success) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `Embedding response from ${url} is not in the OpenAI format:\n${formatZodIssues(result.error, 'response').join('\n')}`,
      });
    }
    const ordered = [...result.data.data].sort((a, b) => a.index - b.index);
    if (ordered.some((item, position) => item.index !== position)) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `Embedding response from ${url} has indices ${describeValue(ordered.map((item) => item.index))}; expected 0..${input.length - 1}.`,
      });
    }
    return checkEmbeddings(
      ordered.map((item) => item.embedding),
      input.length,
      resolved.dimensions,
      `The embeddings endpoint ${url} (model ${resolved.model})`,
    );
  };

  return {
    dimensions: resolved.dimensions,
    embed: (texts) => embedInBatches(texts, resolved.batchSize, request),
  };
}
