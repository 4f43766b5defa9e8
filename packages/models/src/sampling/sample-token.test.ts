import { createRandom } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findStopString, sampleToken, topCandidates } from './sample-token';

describe('sampling', () => {
  it('top-k selection equals a full sort, ties included', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 70 }), (values, k) => {
        const logits = Float32Array.from(values);
        const candidates = values.map((_, index) => index).reverse();
        const sorted = [...candidates].sort((left, right) => logits[right]! - logits[left]! || left - right).slice(0, k);
        expect(topCandidates(candidates, logits, k)).toEqual(sorted);
      }),
    );
  });

  it('greedy, top-k, top-p, allowed sets and model log-probs', () => {
    const logits = Float32Array.from([0, 3, 1, 2.5, -1]);
    const logSum = Math.log([...logits].reduce((sum, value) => sum + Math.exp(value), 0));
    const random = createRandom(1);
    expect(sampleToken(logits, { temperature: 0 }, random)).toEqual({ tokenId: 1, logprob: 3 - logSum });
    expect(sampleToken(logits, { temperature: 0 }, random, [0, 2, 4]).tokenId).toBe(2);
    const counts = new Map<number, number>();
    for (let draw = 0; draw < 2000; draw++) {
      const { tokenId, logprob } = sampleToken(logits, { temperature: 1, topK: 2 }, random);
      expect(logprob).toBeCloseTo(logits[tokenId]! - logSum, 6);
      counts.set(tokenId, (counts.get(tokenId) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([1, 3]);
    // exp(3) / (exp(3) + exp(2.5)) = 0.622
    expect(counts.get(1)! / 2000).toBeGreaterThan(0.57);
    expect(counts.get(1)! / 2000).toBeLessThan(0.67);
    for (let draw = 0; draw < 200; draw++) expect(sampleToken(logits, { temperature: 1, topP: 0.5 }, random).tokenId).toBe(1);
    expect(() => sampleToken(logits, { temperature: -1 }, random)).toThrow();
  });

  it('finds the earliest stop string', () => {
    expect(findStopString('abc</s>def<|x|>', ['<|x|>', '</s>'])).toBe(3);
    expect(findStopString('abc', ['z'])).toBe(-1);
  });
});
