import { createRuntime } from '@agentflow/tensor';
import { createLocalPolicy, createRandomModel } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';
const config = BENCH_SHAPES.world;
const model = createRandomModel(config, 1);
const runtime = createRuntime({ device: 'cpu' });
const policy = await createLocalPolicy({ model, runtime, trainable: { kind: 'full' }, weightDecay: 0 });
let s = 1;
const rnd = () => { s = (s * 48271) % 2147483647; return s / 2147483647; };
const row = () => { const total = 26 + Math.floor(rnd() * 74); const c = 6 + Math.floor(rnd() * 6); return { p: Array.from({ length: total - c }, () => 2 + Math.floor(rnd() * 900)), c: Array.from({ length: c }, () => 2 + Math.floor(rnd() * 900)) }; };
const batches = Array.from({ length: 40 }, () => Array.from({ length: 16 }, row));
const run = async (rows, tokens) => policy.accumulateGradients({ objective: { kind: 'nll' }, promptIds: rows.map((r) => r.p), completionIds: rows.map((r) => r.c), tokenWeights: rows.map((r) => r.c.map(() => 1 / tokens)) });
const modes = { whole: [16], halves: [8, 8], quarters: [4, 4, 4, 4] };
for (let rep = 0; rep < 3; rep++) for (const [name, parts] of Object.entries(modes)) {
  const t = performance.now();
  for (const b of batches) {
    const tokens = b.reduce((a, r) => a + r.c.length, 0);
    const sorted = parts.length === 1 ? b : [...b].sort((x, y) => x.p.length + x.c.length - y.p.length - y.c.length);
    let at = 0;
    for (const n of parts) { await run(sorted.slice(at, at + n), tokens); at += n; }
    await policy.applyGradients({ learningRate: 1e-9 });
  }
  console.log(rep, name, ((performance.now() - t) / batches.length).toFixed(1), 'ms/batch');
}
