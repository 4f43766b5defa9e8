// Grammar-constrained decoding over a Qwen-sized vocabulary (151,643 synthetic byte-level tokens):
// trie build time, and per-step mask time while random walks emit planner actions. Baseline in the
// same run: the same walks over the 256-token byte vocabulary.
// Usage: node bench/constrained-bench.mjs
import { createRandom, plannerActionSchema } from '@agentflow/core';
import { z } from 'zod';
import { createJsonSchemaConstraints } from '../dist/index.js';

const schema = z.toJSONSchema(plannerActionSchema.extend({ action: z.enum(['search', 'python', 'finish']) }));
const encoder = new TextEncoder();

function syntheticVocabulary(size, random) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]":,._-\\\n';
  const seen = new Set();
  const tokens = Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte));
  while (tokens.length < size) {
    const length = 2 + Math.floor(random.next() * 7);
    let text = random.next() < 0.5 ? ' ' : '';
    for (let index = 0; index < length; index++) text += alphabet[Math.floor(random.next() * (random.next() < 0.8 ? 26 : alphabet.length))];
    if (seen.has(text)) continue;
    seen.add(text);
    tokens.push(encoder.encode(text));
  }
  return tokens;
}

function run(label, tokenBytes) {
  const eos = tokenBytes.length;
  let start = performance.now();
  const constraint = createJsonSchemaConstraints({ tokenBytes: [...tokenBytes, undefined], eosTokenIds: [eos] })(schema);
  const build = performance.now() - start;
  const random = createRandom(5);
  const times = [];
  let tokens = 0;
  start = performance.now();
  for (let sample = 0; sample < 20; sample++) {
    let state = constraint.initial;
    for (let remaining = 200; remaining > 0; remaining--) {
      const stepStart = performance.now();
      const allowed = constraint.allowedTokens(state, remaining);
      times.push(performance.now() - stepStart);
      const token = random.choice(allowed);
      if (token === eos) break;
      state = constraint.advance(state, token);
      tokens++;
    }
  }
  const total = performance.now() - start;
  times.sort((left, right) => left - right);
  const line = `${label}: trie ${build.toFixed(0)} ms; ${tokens} constrained tokens in ${total.toFixed(0)} ms (${((total / tokens) * 1000).toFixed(0)} µs/token), median mask ${(times[Math.floor(times.length / 2)] * 1000).toFixed(0)} µs, p99 ${times[Math.floor(times.length * 0.99)].toFixed(1)} ms, max ${times[times.length - 1].toFixed(0)} ms (first visit of a state walks the trie)`;
  console.log(line);
  return total / tokens;
}

const small = run('256-token byte vocabulary', Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte)));
const large = run('151,643-token vocabulary', syntheticVocabulary(151643, createRandom(1)));
console.log(`per-token cost ratio, 151k vs 256 tokens: ${(large / small).toFixed(1)}x`);
