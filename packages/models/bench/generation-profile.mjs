// Where a generation's time goes (issue #32): the prefill, each decode step's session run (lm.step,
// which returns the logits and writes the new tokens' keys and values into the fixed-capacity KV
// cache it reads in place, as generate's steps do) and the sampler over the vocabulary, timed
// apart on the same batch as bench/generation-compare.mjs (random weights, LoRA rank 16 with B = 0).
// Usage: node bench/generation-profile.mjs [--shape 25m|0.6b] [--rows 16] [--prompt 256] [--new 32] [--threads 2]
import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { createCausalLm, createKeyValueCache, createLoraAdapter, createRandomModel, sampleToken } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const config = BENCH_SHAPES[args.shape ?? '25m'];
const rows = Number(args.rows ?? 16);
const prompt = Number(args.prompt ?? 256);
const steps = Number(args.new ?? 32);
const model = createRandomModel(config, 7);
const adapter = createLoraAdapter(config, { rank: 16, alpha: 32 }, 3);
const lm = await createCausalLm({ model, runtime: createRuntime({ device: 'cpu', intraOpThreads: Number(args.threads ?? 2), interOpThreads: 1 }), lora: adapter.config });
const random = createRandom(11);
const int64 = (width, value) => ({ dtype: 'int64', shape: [rows, width], data: BigInt64Array.from({ length: rows * width }, value) });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// As generate: room for the prompt and every step's token.
const cache = createKeyValueCache(config, rows, prompt + steps);
let began = performance.now();
let result = await lm.step({
  inputIds: int64(prompt, () => BigInt(2 + Math.floor(random.next() * (config.vocabSize - 2)))),
  attentionMask: int64(prompt, () => 1n),
  positionIds: int64(prompt, (_, index) => BigInt(index % prompt)),
  cache,
  adapter,
});
const prefill = performance.now() - began;
const run = [];
const sample = [];
for (let step = 0; step < steps; step++) {
  began = performance.now();
  const next = [];
  for (let row = 0; row < rows; row++) {
    next.push(sampleToken(result.lastLogits.subarray(row * result.vocabSize, (row + 1) * result.vocabSize), { temperature: 1 }, random).tokenId);
  }
  sample.push(performance.now() - began);
  began = performance.now();
  result = await lm.step({
    inputIds: { dtype: 'int64', shape: [rows, 1], data: BigInt64Array.from(next, BigInt) },
    attentionMask: int64(1, () => 1n),
    positionIds: int64(1, () => BigInt(prompt + step)),
    cache,
    adapter,
  });
  run.push(performance.now() - began);
}
await lm.release();
console.log(
  `${args.shape ?? '25m'}, ${rows} rows x ${prompt} prompt tokens: prefill ${prefill.toFixed(0)} ms; per decode step (median of ${steps}): lm.step ${median(run).toFixed(1)} ms, sampling ${rows} rows ${median(sample).toFixed(1)} ms`,
);
