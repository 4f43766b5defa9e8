import { createRandom, type Random } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logSumExp, sampleToken } from './sample-token';

/**
 * Plain temperature sampling as sampleToken computed it before one exp per logit (issue #32): each
 * pass recomputing its weights. Rollouts that learning results were measured on drew with this, so
 * the faster sampler must draw the same tokens with the same log-probs, bit for bit.
 */
function recomputingSample(logits: Float32Array, temperature: number, random: Random, allowed?: readonly number[]) {
  const normaliser = logSumExp(logits);
  const count = allowed ? allowed.length : logits.length;
  const idAt = allowed ? (index: number) => allowed[index]! : (index: number) => index;
  const pick = (tokenId: number) => ({ tokenId, logprob: logits[tokenId]! - normaliser });
  let max = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < count; index++) max = Math.max(max, logits[idAt(index)]! / temperature);
  let total = 0;
  for (let index = 0; index < count; index++) total += Math.exp(logits[idAt(index)]! / temperature - max);
  let threshold = random.next() * total;
  for (let index = 0; index < count; index++) {
    threshold -= Math.exp(logits[idAt(index)]! / temperature - max);
    if (threshold < 0) return pick(idAt(index));
  }
  return pick(idAt(count - 1));
}

describe('plain temperature sampling', () => {
  it('draws the tokens and log-probs of the recomputing sampler, bit for bit', () => {
    const logit = fc.oneof(
      { weight: 8, arbitrary: fc.float({ min: -30, max: 30, noNaN: true }) },
      { weight: 1, arbitrary: fc.constantFrom(Number.NEGATIVE_INFINITY, 0, -0, Number.NaN) },
    );
    fc.assert(
      fc.property(
        fc.array(logit, { minLength: 1, maxLength: 300 }),
        fc.constantFrom(1, 0.7, 1.3, 2),
        fc.integer({ min: 0, max: 1000 }),
        fc.option(fc.integer({ min: 1, max: 7 })),
        (values, temperature, seed, stride) => {
          const logits = Float32Array.from(values);
          const allowed = stride === null ? undefined : values.map((_, index) => index).filter((index) => index % stride === 0);
          const ours = createRandom(seed);
          const theirs = createRandom(seed);
          const scratch = new Float64Array(logits.length);
          for (let draw = 0; draw < 5; draw++) {
            const expected = recomputingSample(logits, temperature, theirs, allowed);
            expect(sampleToken(logits, { temperature }, ours, allowed, draw % 2 ? scratch : undefined)).toEqual(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is the same over a Qwen3-sized vocabulary', () => {
    const random = createRandom(3);
    const logits = Float32Array.from({ length: 151936 }, () => 4 * random.normal());
    const ours = createRandom(9);
    const theirs = createRandom(9);
    const scratch = new Float64Array(logits.length);
    for (let draw = 0; draw < 20; draw++) {
      expect(sampleToken(logits, { temperature: 1 }, ours, undefined, scratch)).toEqual(recomputingSample(logits, 1, theirs));
    }
  });
});
