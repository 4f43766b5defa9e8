import { describe, expect, it } from 'vitest';
import { parseSeeds } from './sweep-plan';

describe('sweep plan', () => {
  it('parses seed lists and ranges', () => {
    expect(parseSeeds('0-4')).toEqual([0, 1, 2, 3, 4]);
    expect(parseSeeds('3, 0-1,3')).toEqual([3, 0, 1]);
    expect(() => parseSeeds('a')).toThrow(/--seeds "a": expected seeds like 0-4/);
    expect(() => parseSeeds('0-100000')).toThrow(/ranges low-high of at most 1000/);
  });
});
