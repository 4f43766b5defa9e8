import { createRuntime } from '@agentflow/tensor';
import { createLocalPolicy, createRandomModel } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';
const model = createRandomModel(BENCH_SHAPES.world, 1);
const runtime = createRuntime({ device: 'cpu' });
const policy = await createLocalPolicy({ model, runtime, trainable: { kind: 'full' }, weightDecay: 0 });
const ids = (n, L) => Array.from({ length: n }, () => Array.from({ length: L }, (_, i) => 2 + (i * 7) % 900));
for (const [n, L] of [[1, 8], [16, 8], [16, 32], [16, 64], [16, 96], [8, 96], [32, 96]]) {
  const rows = { objective: { kind: 'nll' }, promptIds: ids(n, L - 4), completionIds: ids(n, 4), tokenWeights: ids(n, 4).map((r) => r.map(() => 0.01)) };
  for (let w = 0; w < 3; w++) await policy.accumulateGradients(rows);
  await policy.applyGradients({ learningRate: 1e-9 });
  let t = performance.now();
  for (let i = 0; i < 20; i++) await policy.accumulateGradients(rows);
  const acc = (performance.now() - t) / 20;
  t = performance.now();
  for (let i = 0; i < 20; i++) { await policy.accumulateGradients(rows); await policy.applyGradients({ learningRate: 1e-9 }); }
  const both = (performance.now() - t) / 20;
  console.log(`rows ${n} len ${L}: accumulate ${acc.toFixed(1)} ms, +adamw ${(both - acc).toFixed(1)} ms`);
}
