// The sampler alone over a vocabulary (issue #32): one decode step's draws, --rows rows of --vocab
// random logits at temperature 1, with this build's sampleToken and, with --before DIR, another
// build's (a copy of dist/ taken before a change), in one process; the draws of both are compared.
// Usage: node bench/sampler-bench.mjs [--vocab 151936] [--rows 16] [--steps 20] [--before DIR]
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRandom } from '@agentflow/core';
import { sampleToken } from '../dist/index.js';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const vocab = Number(args.vocab ?? 151936);
const rows = Number(args.rows ?? 16);
const steps = Number(args.steps ?? 20);
const source = createRandom(5);
const logits = Array.from({ length: rows }, () => Float32Array.from({ length: vocab }, () => 3 * source.normal()));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(name, sample, scratch) {
  const random = createRandom(1);
  const times = [];
  const drawn = [];
  for (let step = 0; step < steps; step++) {
    const began = performance.now();
    for (const row of logits) drawn.push(sample(row, { temperature: 1 }, random, undefined, scratch));
    times.push(performance.now() - began);
  }
  console.log(`${name}: ${median(times).toFixed(1)} ms per step of ${rows} rows x ${vocab} logits (median of ${steps})`);
  return drawn;
}

const builds = [['this build', sampleToken, new Float64Array(vocab)]];
if (args.before) {
  const before = await import(pathToFileURL(join(resolve(args.before), 'index.js')).href);
  builds.unshift(['before', before.sampleToken, undefined]);
}
const draws = [];
for (const [name, sample, scratch] of builds) draws.push(await measure(name, sample, scratch));
if (draws.length === 2) console.log(`draws identical: ${JSON.stringify(draws[0]) === JSON.stringify(draws[1])}`);
