import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRandom } from './seeded-random';

describe('createRandom', () => {
  it('repeats exactly for the same seed and differs for another', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    const c = createRandom(43);
    const seqA = Array.from({ length: 5 }, () => a.nextUint32());
    expect(Array.from({ length: 5 }, () => b.nextUint32())).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.nextUint32())).not.toEqual(seqA);
  });

  it('restores from a saved state', () => {
    const random = createRandom(7);
    random.next();
    const state = random.getState();
    const expected = [random.next(), random.next(), random.int(0, 9)];
    const restored = createRandom(0);
    restored.setState(state);
    expect([restored.next(), restored.next(), restored.int(0, 9)]).toEqual(expected);
  });

  it('produces floats in [0, 1) with a plausible mean', () => {
    const random = createRandom(1);
    let sum = 0;
    for (let i = 0; i < 20000; i++) {
      const x = random.next();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      sum += x;
    }
    expect(sum / 20000).toBeCloseTo(0.5, 1);
  });

  it('normal samples have mean 0 and variance 1', () => {
    const random = createRandom(3);
    const n = 20000;
    const xs = Array.from({ length: n }, () => random.normal());
    const mean = xs.reduce((s, x) => s + x, 0) / n;
    const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / n;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
  });

  it('int stays within bounds and shuffle is a permutation', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: -50, max: 50 }), fc.integer({ min: 0, max: 50 }), (seed, min, span) => {
        const random = createRandom(seed);
        const value = random.int(min, min + span);
        expect(value).toBeGreaterThanOrEqual(min);
        expect(value).toBeLessThanOrEqual(min + span);
        const items = Array.from({ length: span }, (_, i) => i);
        expect([...random.shuffle([...items])].sort((x, y) => x - y)).toEqual(items);
      }),
    );
  });

  it('forks are reproducible and independent of later draws', () => {
    const a = createRandom(5).fork('rollouts');
    const b = createRandom(5).fork('rollouts');
    const c = createRandom(5).fork('labels');
    expect(a.nextUint32()).toBe(b.nextUint32());
    expect(createRandom(5).fork('rollouts').nextUint32()).not.toBe(c.nextUint32());
  });

  it('rejects bad seeds and states with a clear error', () => {
    expect(() => createRandom(1.5)).toThrow('Random seed must be a safe integer, got 1.5');
    expect(() => createRandom(1).setState([1, 2, 3] as never)).toThrow('four unsigned 32-bit integers');
    expect(() => createRandom(1).int(3, 1)).toThrow('min <= max, got (3, 1)');
  });
});
