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
      if (constraint.tokensToComplete(constraint.advance(state, tokenId)) <= remaining - 2) allowed.push(tokenId);
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
        // Budgets from barely enough (the tokens to complete plus EOS) upwards, and the byte cost, so that costs decide.
        const needed = constraint.tokensToComplete(state);
        for (const budget of [needed + 1, needed + 2, needed + 4, state.cost + 1, remaining]) {
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

  it('budgets in tokens, not bytes: keys and values written by merged tokens leave room for content', () => {
    // The tied planner schema in small: a `thought`, then one branch per action. Its shortest
    // completion after `{"thought":"` is 38 bytes, but two merged tokens write it.
    const branch = (action: string, input: Record<string, unknown>) => ({
      type: 'object',
      properties: { thought: { type: 'string' }, action: { const: action }, action_input: input },
      required: ['thought', 'action', 'action_input'],
      additionalProperties: false,
    });
    const schema = { anyOf: [branch('corpus_search', { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false }), branch('finish', { type: 'string' })] };
    const merged = ['{"thought":"find ', 'Roze', 'dogs', '","action":"corpus_search","action_input":{"query":"', '"}}', '","action":"finish","action_input":"', '"}'];
    const tokenBytes = [...Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte)), ...merged.map((text) => encoder.encode(text))];
    const eos = tokenBytes.length;
    const id = (text: string) => tokenBytes.findIndex((bytes) => new TextDecoder().decode(bytes) === text);
    const constraint = createJsonSchemaConstraints({ tokenBytes: [...tokenBytes, undefined], eosTokenIds: [eos] })(schema);
    // A demonstration of 9 tokens and EOS fits a budget of 10, far below the 90 bytes it spells.
    const demonstration = ['{"thought":"find ', 'Roze', ' ', 'dogs', '","action":"corpus_search","action_input":{"query":"', 'Roze', ' ', 'dogs', '"}}'].map(id);
    for (const budget of [demonstration.length + 1, 40]) {
      let state = constraint.initial;
      demonstration.forEach((token, index) => {
        expect(constraint.allowedTokens(state, budget - index), `token ${index} at budget ${budget}`).toContain(token);
        state = constraint.advance(state, token);
      });
      expect(constraint.allowedTokens(state, budget - demonstration.length)).toEqual([eos]);
    }
    expect(constraint.tokensToComplete(constraint.initial)).toBe(3); // {"thought":"find  ","action":"finish","action_input":"  "}
    expect(() => constraint.allowedTokens(constraint.initial, 3)).toThrow(/needs 4 tokens here/);
  });

  it('never strands a walk: every budget the first step allows is enough to end in valid JSON and EOS', () => {
    const tokenBytes = mixedVocabulary(900, 17);
    const eos = tokenBytes.length;
    const schema = {
      anyOf: [
        { type: 'object', properties: { a: { type: 'string', minLength: 2, maxLength: 5 }, b: { type: 'array', items: { type: 'integer' }, minItems: 1 } }, required: ['a', 'b'], additionalProperties: false },
        { type: 'object', properties: { a: { const: 'ab' }, c: { type: 'string' } }, required: ['a', 'c'], additionalProperties: false },
      ],
    };
    const constraint = createJsonSchemaConstraints({ tokenBytes: [...tokenBytes, undefined], eosTokenIds: [eos] })(schema);
    const random = createRandom(23);
    for (let sample = 0; sample < 60; sample++) {
      let state = constraint.initial;
      let remaining = constraint.tokensToComplete(state) + 1 + Math.floor(random.next() * 6);
      for (; remaining > 0; remaining--) {
        const token = random.choice(constraint.allowedTokens(state, remaining));
        if (token === eos) break;
        state = constraint.advance(state, token);
      }
      expect(remaining, 'the walk ran out of tokens before EOS').toBeGreaterThan(0);
      expect(constraint.isComplete(state)).toBe(true);
    }
  });
});
