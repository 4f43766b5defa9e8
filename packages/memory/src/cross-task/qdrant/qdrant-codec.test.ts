import { describe, expect, it } from 'vitest';
import { encodeBm25Document, encodeBm25Query, hashTerm } from './bm25-sparse-encoder';
import { toPointId } from './point-id';

describe('toPointId', () => {
  it('maps a record id to a stable version-5 UUID, different ids to different UUIDs', () => {
    const id = toPointId('paris');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(toPointId('paris')).toBe(id);
    expect(toPointId('Paris')).not.toBe(id);
  });
});

describe('BM25 sparse encoding', () => {
  const parameters = { k1: 1.2, b: 0.75, averageDocumentLength: 4 };

  it('hashes terms to unsigned 32-bit indices (FNV-1a)', () => {
    expect(hashTerm('')).toBe(0x811c9dc5);
    expect(hashTerm('a')).toBe(0xe40c292c);
    expect(hashTerm('東京')).toBeLessThan(2 ** 32);
  });

  it('weights a document term by saturated, length-normalised frequency', () => {
    // "cat cat dog": 3 terms, average 4 -> length factor 1 - 0.75 + 0.75 * 3 / 4 = 0.8125
    const vector = encodeBm25Document('Cat cat dog', parameters);
    const weightOf = (term: string) => vector.values[vector.indices.indexOf(hashTerm(term))];
    expect(vector.indices).toHaveLength(2);
    expect(weightOf('cat')).toBeCloseTo((2 * 2.2) / (2 + 1.2 * 0.8125), 12);
    expect(weightOf('dog')).toBeCloseTo((1 * 2.2) / (1 + 1.2 * 0.8125), 12);
    expect([...vector.indices].sort((a, b) => a - b)).toEqual(vector.indices);
  });

  it('encodes a query as distinct terms of weight one', () => {
    expect(encodeBm25Query('dog DOG cat?')).toEqual({
      indices: [hashTerm('dog'), hashTerm('cat')].sort((a, b) => a - b),
      values: [1, 1],
    });
    expect(encodeBm25Query('?!')).toEqual({ indices: [], values: [] });
  });
});
