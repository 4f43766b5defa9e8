import { describe, expect, it } from 'vitest';
import { parseSeedList } from './seed-list';

describe('parseSeedList', () => {
  it('parses seed lists and ranges, distinct, in the order given', () => {
    expect(parseSeedList('0-4')).toEqual([0, 1, 2, 3, 4]);
    expect(parseSeedList('3, 0-1,3')).toEqual([3, 0, 1]);
    expect(() => parseSeedList('a')).toThrow(/--seeds "a": expected seeds like 0-4/);
    expect(() => parseSeedList('0-100000')).toThrow(/ranges low-high of at most 1000/);
    expect(() => parseSeedList('4-2', 'seeds')).toThrow(/^seeds "4-2": .*; "4-2" is not one\.$/);
  });
});
