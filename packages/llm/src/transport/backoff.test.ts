import { describe, expect, it } from 'vitest';
import { fullJitterBackoffMs, parseRetryAfterMs } from './backoff';

describe('backoff', () => {
  it('draws full jitter under a doubling, capped ceiling', () => {
    expect(fullJitterBackoffMs(0, 500, 30_000, () => 0.999)).toBe(499);
    expect(fullJitterBackoffMs(3, 500, 30_000, () => 0.5)).toBe(2000);
    expect(fullJitterBackoffMs(20, 500, 30_000, () => 0.5)).toBe(15_000);
    expect(fullJitterBackoffMs(2, 500, 30_000, () => 0)).toBe(0);
  });
  it('parses Retry-After seconds and HTTP dates', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfterMs('120', now)).toBe(120_000);
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs(null, now)).toBeUndefined();
  });
});
