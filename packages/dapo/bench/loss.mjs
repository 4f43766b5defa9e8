// Throughput of the DAPO loss + gradient: typed arrays in JavaScript (baseline), the ragged
// per-sequence helper, and the same objective as an ONNX graph on ONNX Runtime (CPU).
// Usage: pnpm --filter @agentflow/dapo bench   (after pnpm --filter @agentflow/dapo build)
import { createRandom } from '@agentflow/core';
import { createGraphBuilder, createRuntime } from '@agentflow/tensor';
import { addClippedSurrogate } from '../dist/graph.js';
import { aggregationTokenWeights, clippedSurrogate, sequenceSurrogateLoss } from '../dist/index.js';

const rows = 4096;
const width = 256;
const tokens = rows * width;
const random = createRandom(1);
const oldLogprobs = new Float32Array(tokens).map(() => -0.1 - 3 * random.next());
const newLogprobs = oldLogprobs.map((value) => value + 0.4 * (random.next() - 0.5));
const advantages = new Float32Array(tokens);
for (let row = 0; row < rows; row++) advantages.fill(2 * random.next() - 1, row * width, (row + 1) * width);
const weights = aggregationTokenWeights(Array.from({ length: rows }, () => new Float32Array(width).fill(1)), { aggregation: 'token-mean' });
const tokenWeights = new Float32Array(tokens);
for (const [index, row] of weights.entries()) tokenWeights.set(row, index * width);
const settings = { epsLow: 0.2, epsHigh: 0.28 };

async function time(label, repetitions, run) {
  await run(); // warm-up
  const started = performance.now();
  let result;
  for (let index = 0; index < repetitions; index++) result = await run();
  const seconds = (performance.now() - started) / 1000 / repetitions;
  return { label, seconds, tokensPerSecond: tokens / seconds, loss: result };
}

const results = [];
results.push(
  await time('typed arrays (clippedSurrogate)', 5, () => clippedSurrogate({ newLogprobs, oldLogprobs, advantages, tokenWeights }, settings).loss),
);
const sequences = Array.from({ length: rows }, (_value, row) => ({
  newLogprobs: Array.from(newLogprobs.subarray(row * width, (row + 1) * width)),
  oldLogprobs: Array.from(oldLogprobs.subarray(row * width, (row + 1) * width)),
  advantages: Array.from(advantages.subarray(row * width, (row + 1) * width)),
}));
results.push(await time('ragged number[] rows (sequenceSurrogateLoss)', 3, () => sequenceSurrogateLoss(sequences, { ...settings, aggregation: 'token-mean' }).loss));

const graph = createGraphBuilder({ name: 'dapo-bench' });
const input = graph.input('new_logprobs', 'float32', ['batch', 'seq']);
const objective = addClippedSurrogate(graph, input, settings);
const [gradient] = graph.gradients(objective.loss, [input]);
graph.output(objective.loss, 'loss');
graph.output(gradient, 'grad');
const session = await createRuntime({ device: 'cpu', intraOpThreads: 2, logger: { warn() {} } }).createSession(graph.toBytes());
const feed = (data) => ({ dtype: 'float32', shape: [rows, width], data });
const feeds = {
  new_logprobs: feed(newLogprobs),
  [objective.inputNames.oldLogprobs]: feed(oldLogprobs),
  [objective.inputNames.advantages]: feed(advantages),
  [objective.inputNames.tokenWeights]: feed(tokenWeights),
};
results.push(await time('ONNX graph on ONNX Runtime CPU, 2 threads (addClippedSurrogate)', 5, async () => (await session.run(feeds)).loss.data[0]));
await session.release();

const baseline = results[0].seconds;
console.log(`DAPO loss + gradient over ${tokens.toLocaleString('en-US')} tokens (${rows} rows x ${width}), Node ${process.version}`);
for (const result of results) {
  console.log(
    `${result.label.padEnd(66)} ${(result.seconds * 1000).toFixed(1).padStart(8)} ms  ${(result.tokensPerSecond / 1e6).toFixed(1).padStart(6)} M tokens/s  x${(baseline / result.seconds).toFixed(2)} vs baseline  loss ${Number(result.loss).toFixed(6)}`,
  );
}
