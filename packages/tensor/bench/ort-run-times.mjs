// Where a process's ONNX Runtime time goes, by graph: a preload that times every
// InferenceSession.run (from the call until its result, so it includes the wait for the main
// thread) and prints, at exit, the seconds and runs per graph, a graph named by its outputs and
// inputs (the first two output names; inputs count LoRA adapters) and the length of the fed
// sequence (1: a decode step; up to 64; over 64).
// Usage: node --import ./packages/tensor/bench/ort-run-times.mjs apps/trainer/dist/cli.js run --quiet
//        (any node command of the repository; the table goes to stderr)
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const ort = createRequire(import.meta.url)('onnxruntime-node');
const run = ort.InferenceSession.prototype.run;
const totals = new Map();

ort.InferenceSession.prototype.run = async function timedRun(feeds, ...rest) {
  const ids = Object.values(feeds).find((tensor) => tensor.type === 'int64' && tensor.dims.length === 2);
  const sequence = ids === undefined ? 'no ids' : ids.dims[1] === 1 ? 'length 1' : ids.dims[1] <= 64 ? 'length <= 64' : 'length > 64';
  const key = `${this.outputNames.slice(0, 2).join(', ')} (${this.outputNames.length} out, ${this.inputNames.length} in), ${sequence}`;
  const began = performance.now();
  try {
    return await run.call(this, feeds, ...rest);
  } finally {
    const total = totals.get(key) ?? { runs: 0, ms: 0 };
    total.runs++;
    total.ms += performance.now() - began;
    totals.set(key, total);
  }
};

process.on('exit', () => {
  const rows = [...totals].sort((a, b) => b[1].ms - a[1].ms);
  const seconds = rows.reduce((sum, [, total]) => sum + total.ms, 0) / 1000;
  process.stderr.write(`\nONNX Runtime runs: ${seconds.toFixed(1)} s in all\n| seconds | runs | ms a run | graph, fed sequence |\n|---:|---:|---:|---|\n`);
  for (const [key, total] of rows) {
    process.stderr.write(`| ${(total.ms / 1000).toFixed(1)} | ${total.runs} | ${(total.ms / total.runs).toFixed(2)} | ${key} |\n`);
  }
});
