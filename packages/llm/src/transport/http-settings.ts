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
      .describe('Per-attempt timeout; a CPU-hosted 8B model can take a minute per answer. Cut to the time left before the call\'s deadline.'),
    totalTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(600_000)
      .describe(
        'Deadline of one call, every attempt, backoff and Retry-After wait included (10 minutes: room for a few slow attempts). A deadline carried by the request\'s signal (a run\'s time limit) ends it sooner.',
      ),
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
      .describe('Cap on the wait a server imposes through Retry-After; a Retry-After beyond the time left before the deadline ends the call at once.'),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 * 1024)
      .describe(
        'Cap on the bytes of one response body, read as it streams (8 MiB: a 32k-token reply is well under 1 MiB of JSON). A larger body is cut off, the request aborted, and the call fails with RESPONSE_TOO_LARGE, without retrying.',
      ),
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
