import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { type ConstraintState, createJsonSchemaConstraints, type TokenConstraint } from './token-constraint';
import { buildTokenTrie } from './token-trie';

const encoder = new TextEncoder();

/** Single bytes, then random multi-character tokens mixing ASCII, 2-4 byte characters, quotes, escapes and cut UTF-8. */
function mixedVocabulary(size: number, seed: number): Uint8Array[] {
  const random = createRandom(seed);
  const pieces = ['a', 'b', ' ', 'é', '中', '🙂', '"', '\\', 'n', '1', ',', '}', ':'];
  const tokens = Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte));
  const seen = new Set(tokens.map((bytes) => bytes.join(',')));
  while (tokens.length < size) {
    let bytes = [...encoder.encode(Array.from({ length: 1 + Math.floor(random.next() * 4) }, () => random.choice(pieces)).join(''))];
    if (random.next() < 0.1) bytes = bytes.slice(0, -1); // a token that ends inside a character
    const key = bytes.join(',');
    if (bytes.length === 0 || seen.has(key)) continue;
    seen.add(key);
    tokens.push(Uint8Array.from(bytes));
  }
  return tokens;
}

/** Allowed tokens by trying every token: what the trie walk and the string shortcut must agree with. */
function bruteForceAllowed(constraint: TokenConstraint, state: ConstraintState, tokenBytes: Uint8Array[], eos: number, remaining: number): number[] {
  const allowed: number[] = [];
  tokenBytes.forEach((_, tokenId) => {
    try {
      if (constraint.advance(state, tokenId).cost <= remaining - 2) allowed.push(tokenId);
    } catch {
      // not allowed here
    }
  });
  if (state.complete) allowed.push(eos);
  return allowed.sort((left, right) => left - right);
}

describe('token constraints over a multi-byte vocabulary', () => {
  it('builds a trie whose edges are in byte order and reach every token', () => {
    const tokenBytes = mixedVocabulary(600, 3);
    const trie = buildTokenTrie([...tokenBytes, undefined]);
    for (let node = 0; node < trie.size; node++) {
      for (let edge = trie.edgeStart[node]! + 1; edge < trie.edgeStart[node + 1]!; edge++) expect(trie.edgeByte[edge]!).toBeGreaterThan(trie.edgeByte[edge - 1]!);
    }
    tokenBytes.forEach((bytes, tokenId) => {
      let node = 0;
      for (const byte of bytes) {
        let found = -1;
        for (let edge = trie.edgeStart[node]!; edge < trie.edgeStart[node + 1]!; edge++) if (trie.edgeByte[edge] === byte) found = trie.edgeChild[edge]!;
        expect(found).toBeGreaterThan(0);
        node = found;
      }
      expect(trie.tokensAt.get(node)).toContain(tokenId);
    });
  });

  it('prices plain tokens inside bounded strings exactly as the byte automaton does', () => {
    const tokenBytes = mixedVocabulary(800, 5);
    const eos = tokenBytes.length;
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', minLength: 3, maxLength: 7 }, b: { type: 'string' }, c: { type: 'string', maxLength: 2 } },
      required: ['a', 'b', 'c'],
      additionalProperties: false,
    };
    const constraint = createJsonSchemaConstraints({ tokenBytes: [...tokenBytes, undefined], eosTokenIds: [eos] })(schema);
    const random = createRandom(11);
    for (let sample = 0; sample < 5; sample++) {
      let state = constraint.initial;
      for (let remaining = 40; remaining > 0; remaining--) {
        // Budgets from barely enough (the shortest completion plus EOS) upwards, so that costs decide.
        for (const budget of [state.cost + 1, state.cost + 2, state.cost + 4, remaining]) {
          const allowed = constraint.allowedTokens(state, budget);
          expect([...allowed].sort((left, right) => left - right)).toEqual(bruteForceAllowed(constraint, state, tokenBytes, eos, budget));
        }
        const token = random.choice(constraint.allowedTokens(state, remaining));
        if (token === eos) break;
        state = constraint.advance(state, token);
      }
      expect(constraint.isComplete(state)).toBe(true);
    }
  });
});
