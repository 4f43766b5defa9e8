import { z } from 'zod';

/**
 * How an HTTP back end is called: endpoints, timeouts, retries, concurrency. Shared by
 * the Ollama and OpenAI-compatible models.
 */
export const httpSettingsSchema = z
  .object({
    endpoints: z
      .array(z.url())
      .min(1)
      .describe('Base URLs served in turn (round-robin); a failing one fails over to the next.'),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe('Per-attempt timeout; a CPU-hosted 8B model can take a minute per answer.'),
    maxRetries: z
      .number()
      .int()
      .nonnegative()
      .default(4)
      .describe('Retries after the first attempt on 429, 5xx, timeouts and connection errors.'),
    initialBackoffMs: z
      .number()
      .nonnegative()
      .default(500)
      .describe('Backoff ceiling of the first retry round; doubles each round (full jitter).'),
    maxBackoffMs: z.number().nonnegative().default(30_000).describe('Upper bound of one backoff delay.'),
    maxRetryAfterMs: z
      .number()
      .nonnegative()
      .default(60_000)
      .describe('Cap on the wait a server imposes through Retry-After.'),
    concurrency: z
      .number()
      .int()
      .positive()
      .default(4)
      .describe('Requests in flight per endpoint (Ollama serves OLLAMA_NUM_PARALLEL=4 by default).'),
  })
  .strict();

export type HttpSettingsInput = z.input<typeof httpSettingsSchema>;
export type HttpSettings = z.output<typeof httpSettingsSchema>;

/** The outside world an HTTP model talks through; injected so tests control time and transport. */
export interface HttpEnvironment {
  fetch?: typeof globalThis.fetch;
  /** A float in [0, 1); used for jitter. Defaults to Math.random. */
  random?: () => number;
  /** Waits `ms`, rejecting when `signal` aborts. Defaults to a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Milliseconds since the epoch, for Retry-After dates. */
  now?: () => number;
}
