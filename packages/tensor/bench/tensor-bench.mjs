// Forward and forward+backward throughput of transformer-sized MatMul stacks and attention,
// in GFLOP/s and as a fraction of the peak MatMul rate measured in the same run.
// Usage: pnpm --filter @agentflow/tensor bench [-- --threads 2 --device cpu --seconds 2]
//
// Each row alternates runs of its graph with runs of the peak MatMul (a 1024^3 product),
// so on a shared machine both see the same load; the fraction compares the best runs of each.
import { availableParallelism, loadavg } from 'node:os';
import { createRuntime } from '../dist/index.js';
import { buildAttention, buildMatmulStack, buildPeakMatmul, makeFeeds, sizes } from './graphs.mjs';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
};
const threads = Number(argument('threads', String(Math.min(2, availableParallelism()))));
const device = argument('device', 'cpu');
const minimumSeconds = Number(argument('seconds', '2'));

const runtime = createRuntime({ device, intraOpThreads: threads, interOpThreads: 1 });
// Best-of-N: on a shared machine the fastest run is the one least disturbed by other work.
const best = (values) => Math.min(...values);

async function load(name, graph) {
  const session = await runtime.createSession(graph.bytes, { name });
  const feeds = makeFeeds(graph.inputs);
  for (let i = 0; i < 2; i++) await session.run(feeds);
  return { name, session, feeds, flops: graph.flops };
}

const peak = await load('peak MatMul 1024x1024x1024', buildPeakMatmul(1024));

async function measure(name, graph) {
  const row = await load(name, graph);
  const rowTimes = [];
  const peakTimes = [];
  const started = performance.now();
  while (performance.now() - started < minimumSeconds * 1000 || rowTimes.length < 3) {
    let t0 = performance.now();
    await peak.session.run(peak.feeds);
    peakTimes.push(performance.now() - t0);
    t0 = performance.now();
    await row.session.run(row.feeds);
    rowTimes.push(performance.now() - t0);
  }
  await row.session.release();
  const milliseconds = best(rowTimes);
  const gflops = row.flops / (milliseconds / 1000) / 1e9;
  const peakGflops = peak.flops / (best(peakTimes) / 1000) / 1e9;
  return { name, runs: rowTimes.length, milliseconds, gflops, peakGflops, flops: row.flops };
}

const results = [];
results.push(await measure(`MatMul stack ${sizes.layers}x(${sizes.hidden}->${sizes.intermediate}->${sizes.hidden}), ${sizes.tokens} tokens, forward`, buildMatmulStack(false)));
results.push(await measure('MatMul stack, forward+backward', buildMatmulStack(true)));
results.push(await measure(`GQA attention ${sizes.heads}/${sizes.kvHeads} heads x ${sizes.headDim}, ${sizes.tokens} tokens, forward`, buildAttention(false)));
results.push(await measure('GQA attention, forward+backward', buildAttention(true)));
await peak.session.release();

console.log(`device ${runtime.device}, ${threads} intra-op threads, node ${process.version}, >= ${minimumSeconds} s per row, load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
console.log('| graph | GFLOP per run | runs | best ms | GFLOP/s | peak MatMul GFLOP/s (same window) | fraction of peak |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of results) {
  console.log(
    `| ${row.name} | ${(row.flops / 1e9).toFixed(2)} | ${row.runs} | ${row.milliseconds.toFixed(1)} | ${row.gflops.toFixed(1)} | ${row.peakGflops.toFixed(1)} | ${(row.gflops / row.peakGflops).toFixed(2)} |`,
  );
}
