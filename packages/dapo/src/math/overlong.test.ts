import { describe, expect, it } from 'vitest';
import { completionMask, softOverlongPenalty } from './overlong';

describe('softOverlongPenalty (spec: L_max 20480, L_cache 4096)', () => {
  const settings = { maxLength: 20480, cacheLength: 4096 };
  it.each([
    [16384, 0],
    [16385, -0.000244140625],
    [18432, -0.5],
    [20480, -1],
    [20481, -1],
    [10, 0],
  ])('length %i -> %f', (length, expected) => {
    expect(softOverlongPenalty(length, settings)).toBe(expected);
  });

  it('scales with the penalty factor and rejects bad settings', () => {
    expect(softOverlongPenalty(18432, { ...settings, penaltyFactor: 0.5 })).toBe(-0.25);
    expect(() => softOverlongPenalty(5, { maxLength: 10, cacheLength: 11 })).toThrow(/cacheLength <= maxLength/);
    expect(() => softOverlongPenalty(-1, settings)).toThrow(/non-negative integer, got -1/);
  });
});

describe('completionMask', () => {
  it('masks a truncated completion only when the switch is on', () => {
    expect(Array.from(completionMask(3, true, true))).toEqual([0, 0, 0]);
    expect(Array.from(completionMask(3, true, false))).toEqual([1, 1, 1]);
    expect(Array.from(completionMask(2, false, true))).toEqual([1, 1]);
  });
});
