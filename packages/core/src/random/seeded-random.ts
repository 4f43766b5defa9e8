import { AgentFlowError } from '../errors/agentflow-error';

/** The full state of a generator: four 32-bit words (xoshiro128**). */
export type RandomState = [number, number, number, number];

/**
 * A seeded, reproducible random source. Every random choice in AgentFlow takes one of
 * these (injected, never global) so that a run with the same seed repeats exactly, and
 * its state can be checkpointed and restored.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An unsigned 32-bit integer. */
  nextUint32(): number;
  /** An integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** A standard normal sample (Box-Muller). */
  normal(): number;
  /** Shuffles in place (Fisher-Yates) and returns the array. */
  shuffle<T>(items: T[]): T[];
  /** One element chosen uniformly. */
  choice<T>(items: readonly T[]): T;
  /** An independent generator derived from this one and a label. */
  fork(label: string): Random;
  getState(): RandomState;
  setState(state: RandomState): void;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashLabel(label: string): number {
  // FNV-1a, 32 bit.
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;

/** Creates a generator from an integer seed (any safe integer; the low 53 bits are used). */
export function createRandom(seed: number): Random {
  if (!Number.isSafeInteger(seed)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Random seed must be a safe integer, got ${seed}.`,
      details: { seed },
    });
  }
  const mix = splitmix32((seed >>> 0) ^ hashLabel(String(Math.floor(seed / 2 ** 32))));
  const s: RandomState = [mix(), mix(), mix(), mix()];
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  return fromState(s);
}

function fromState(initial: RandomState): Random {
  const s: RandomState = [...initial];
  let spareNormal: number | undefined;

  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] = (s[2] ^ s[0]) >>> 0;
    s[3] = (s[3] ^ s[1]) >>> 0;
    s[1] = (s[1] ^ s[2]) >>> 0;
    s[0] = (s[0] ^ s[3]) >>> 0;
    s[2] = (s[2] ^ t) >>> 0;
    s[3] = rotl(s[3], 11);
    return result;
  };
  // 53 random bits for a uniform double in [0, 1).
  const next = (): number => ((nextUint32() >>> 5) * 67108864 + (nextUint32() >>> 6)) / 9007199254740992;

  const random: Random = {
    next,
    nextUint32,
    int(min, max) {
      if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `int(min, max) needs integers with min <= max, got (${min}, ${max}).`,
        });
      }
      return min + Math.floor(next() * (max - min + 1));
    },
    normal() {
      if (spareNormal !== undefined) {
        const value = spareNormal;
        spareNormal = undefined;
        return value;
      }
      let u = 0;
      while (u === 0) u = next();
      const v = next();
      const radius = Math.sqrt(-2 * Math.log(u));
      spareNormal = radius * Math.sin(2 * Math.PI * v);
      return radius * Math.cos(2 * Math.PI * v);
    },
    shuffle(items) {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        const tmp = items[i] as (typeof items)[number];
        items[i] = items[j] as (typeof items)[number];
        items[j] = tmp;
      }
      return items;
    },
    choice(items) {
      if (items.length === 0) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'choice() needs a non-empty array.' });
      }
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    fork(label) {
      const mix = splitmix32(nextUint32() ^ hashLabel(label));
      const forked: RandomState = [mix(), mix(), mix(), mix()];
      if ((forked[0] | forked[1] | forked[2] | forked[3]) === 0) forked[0] = 1;
      return fromState(forked);
    },
    getState() {
      return [...s];
    },
    setState(state) {
      if (state.length !== 4 || state.some((word) => !Number.isInteger(word) || word < 0 || word > 0xffffffff)) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Random state must be four unsigned 32-bit integers, got ${JSON.stringify(state)}.`,
        });
      }
      s[0] = state[0];
      s[1] = state[1];
      s[2] = state[2];
      s[3] = state[3];
      spareNormal = undefined;
    },
  };
  return random;
}
