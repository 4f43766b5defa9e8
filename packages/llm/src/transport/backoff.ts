/**
 * Delay before retry number `retry` (0-based), "full jitter": a uniform draw in
 * [0, min(maxMs, baseMs * 2^retry)). Full jitter spreads clients that failed together
 * (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015).
 */
export function fullJitterBackoffMs(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/**
 * Parses an HTTP `Retry-After` header (RFC 9110, section 10.2.3): either delay-seconds
 * or an HTTP date. Returns milliseconds from `nowMs`, or undefined when absent or invalid.
 */
export function parseRetryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
