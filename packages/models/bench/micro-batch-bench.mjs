// Padding in training updates: a batch padded to its longest row as drawn, against the same rows
// taken shortest first and cut into runs of fewer rows (the warm start's `microBatchRows`, DAPO's
// length-ordered micro-batches). The rows are the planner steps of a run's collected trajectories
// (their prompt and completion token ids), on the world planner's shape (bench-shapes.mjs `world`)
// trained in full, as the default's warm start trains it. Two workloads, alternated in rounds so
// a busy machine slows each alike; each reports ms per update and its ratio to "as drawn":
//   warm start  updates of 16 steps drawn at random; one forward and backward run of 16, or runs of 8 or 4
//   dapo        updates of every step of 16 trajectories (about 75 rows); micro-batches of 8 rows
//               in trajectory order, or in length order; log-probs and the training runs
// Usage: node bench/micro-batch-bench.mjs --run RUN_DIR [--updates 30] [--rounds 3]
//        (after pnpm --filter @agentflow/models build; RUN_DIR from `agentflow run`)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { lengthOrder, rowLength } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { createLocalPolicy, createRandomModel } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
if (!args.run) {
  console.error('usage: node bench/micro-batch-bench.mjs --run RUN_DIR [--updates 30] [--rounds 3]');
  process.exit(2);
}
const updates = Number(args.updates ?? 30);
const rounds = Number(args.rounds ?? 3);

const trajectories = [];
for (const line of readFileSync(join(args.run, 'trajectories.jsonl'), 'utf8').split('\n')) {
  if (!line) continue;
  const steps = JSON.parse(line)
    .steps.filter((step) => step.promptTokenIds?.length && step.completionTokenIds?.length)
    .map((step) => ({ promptIds: step.promptTokenIds, completionIds: step.completionTokenIds }));
  if (steps.length > 0) trajectories.push(steps);
}
const steps = trajectories.flat();
const vocabSize = steps.reduce((largest, step) => Math.max(largest, ...step.promptIds, ...step.completionIds), BENCH_SHAPES.world.vocabSize - 1) + 1;
const model = createRandomModel({ ...BENCH_SHAPES.world, vocabSize }, 1);
const runtime = createRuntime({ device: 'cpu' });
const policy = await createLocalPolicy({ model, runtime, trainable: { kind: 'full' }, weightDecay: 0 });

// A seeded generator (Park-Miller), so every round draws the same batches.
let state = 12345;
const next = () => {
  state = (state * 48271) % 2147483647;
  return state / 2147483647;
};
const warmBatches = Array.from({ length: updates }, () => Array.from({ length: 16 }, () => steps[Math.floor(next() * steps.length)]));
const dapoBatches = Array.from({ length: Math.max(1, Math.floor(updates / 4)) }, () =>
  Array.from({ length: 16 }, () => trajectories[Math.floor(next() * trajectories.length)]).flat(),
);
const shortestFirst = (rows) => lengthOrder(rows.map(rowLength)).map((at) => rows[at]);
const runsOf = (rows, size) => Array.from({ length: Math.ceil(rows.length / size) }, (_, index) => rows.slice(index * size, (index + 1) * size));
const padded = (runs) => runs.reduce((sum, run) => sum + run.length * Math.max(...run.map(rowLength)), 0);

async function update(runs, weightOf) {
  for (const run of runs) {
    await policy.accumulateGradients({
      objective: { kind: 'nll' },
      promptIds: run.map((row) => row.promptIds),
      completionIds: run.map((row) => row.completionIds),
      tokenWeights: run.map((row) => row.completionIds.map(() => weightOf)),
    });
  }
  await policy.applyGradients({ learningRate: 1e-9 });
}

const workloads = {
  'warm start': {
    batches: warmBatches,
    modes: {
      'as drawn, 1 run of 16': (rows) => [rows],
      'shortest first, runs of 8': (rows) => runsOf(shortestFirst(rows), 8),
      'shortest first, runs of 4': (rows) => runsOf(shortestFirst(rows), 4),
    },
    scoring: false,
  },
  dapo: {
    batches: dapoBatches,
    modes: {
      'trajectory order, runs of 8': (rows) => runsOf(rows, 8),
      'length order, runs of 8': (rows) => runsOf(shortestFirst(rows), 8),
    },
    scoring: true,
  },
};

const real = (batches) => batches.reduce((sum, rows) => sum + rows.reduce((total, row) => total + rowLength(row), 0), 0);
console.log(`${steps.length} steps of ${trajectories.length} trajectories from ${args.run}; lengths ${Math.min(...steps.map(rowLength))}-${Math.max(...steps.map(rowLength))} tokens`);
for (const [name, workload] of Object.entries(workloads)) {
  const times = Object.fromEntries(Object.keys(workload.modes).map((mode) => [mode, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [mode, cut] of Object.entries(workload.modes)) {
      const began = performance.now();
      for (const rows of workload.batches) {
        const runs = cut(rows);
        if (workload.scoring) {
          // Old and reference log-probs: two scoring passes over the same micro-batches.
          for (let pass = 0; pass < 2; pass++) for (const run of runs) await policy.logprobs({ promptIds: run.map((row) => row.promptIds), completionIds: run.map((row) => row.completionIds) });
        }
        await update(runs, 1 / rows.reduce((sum, row) => sum + row.completionIds.length, 0));
      }
      times[mode].push((performance.now() - began) / workload.batches.length);
    }
  }
  const [baseline] = Object.keys(workload.modes);
  const baseTimes = times[baseline];
  console.log(`\n## ${name}: ${workload.batches.length} updates, ${rounds} rounds (real tokens ${real(workload.batches)})`);
  console.log('| mode | padded tokens | ms per update (each round) | ratio to the first, per round |');
  console.log('|---|---:|---|---|');
  for (const [mode, cut] of Object.entries(workload.modes)) {
    const tokens = workload.batches.reduce((sum, rows) => sum + padded(cut(rows)), 0);
    const ratios = times[mode].map((time, round) => (time / baseTimes[round]).toFixed(2));
    console.log(`| ${mode} | ${tokens} | ${times[mode].map((time) => time.toFixed(1)).join(', ')} | ${ratios.join(', ')} |`);
  }
}
await policy.release();
