/**
 * The set of word n-gram shingles of a token list. Text shorter than `size` words yields
 * one shingle of all its words, so short items still compare. Shingles stay strings:
 * the engine's own string hashing is faster than hashing them in JavaScript.
 */
export function shingleSet(tokens: readonly string[], size: number): Set<string> {
  const shingles = new Set<string>();
  if (tokens.length === 0) return shingles;
  if (tokens.length < size) {
    shingles.add(tokens.join(' '));
    return shingles;
  }
  for (let start = 0; start + size <= tokens.length; start++) {
    shingles.add(tokens.slice(start, start + size).join(' '));
  }
  return shingles;
}
