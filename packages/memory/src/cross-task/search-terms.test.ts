import { describe, expect, it } from 'vitest';
import { MAX_QUERY_TERMS, queryTerms, toFtsMatchExpression, tokenizeForSearch } from './search-terms';

describe('search terms', () => {
  it('splits on anything that is not a letter or digit, lower-cased, across scripts', () => {
    expect(tokenizeForSearch('What is 2+2? Ünïcode: Zürich, 東京!')).toEqual([
      'what',
      'is',
      '2',
      '2',
      'ünïcode',
      'zürich',
      '東京',
    ]);
  });

  it('quotes every term so FTS5 operators in user text stay plain words', () => {
    expect(toFtsMatchExpression(queryTerms('cats AND "dogs" NEAR(x) * col:value cats'))).toBe(
      '"cats" OR "and" OR "dogs" OR "near" OR "x" OR "col" OR "value"',
    );
    expect(toFtsMatchExpression(['say "hi"'])).toBe('"say ""hi"""');
  });

  it('returns no expression for text without terms and caps long queries', () => {
    expect(toFtsMatchExpression(queryTerms(' ?!* '))).toBeUndefined();
    const long = Array.from({ length: 200 }, (_, index) => `w${index}`).join(' ');
    expect(queryTerms(long)).toHaveLength(MAX_QUERY_TERMS);
  });
});
