// Benchmark of PRM step scoring on the CPU: steps scored per second (batched) and the
// latency of one score, for the tiny preset and a random Qwen3-0.6B-shaped backbone.
// Baseline measured in the same run: the same steps scored one at a time.
// Usage: pnpm --filter @agentflow/prm bench [-- --presets tiny,qwen3-0.6b-shape]
import { performance } from 'node:perf_hooks';
import { createRandom } from '@agentflow/core';
import { createPrm, renderStepInput } from '../dist/index.js';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
};
const presets = argument('presets', 'tiny,qwen3-0.6b-shape').split(',');
const plans = {
  // steps per batched run, batched repetitions, single-score repetitions
  tiny: { steps: 64, repeats: 5, singles: 50 },
  'qwen3-0.6b-shape': { steps: 6, repeats: 1, singles: 2 },
};

/** Realistic planner steps: a question, two earlier decisions, and the decision to score. */
function steps(count) {
  const random = createRandom(11);
  return Array.from({ length: count }, (_, index) => ({
    question: `A warehouse holds ${random.int(100, 999)} crates of ${random.int(5, 60)} kg each. How many tonnes is that, and which city hosts the warehouse with id ${index}?`,
    history: [
      { thought: 'Find the warehouse first.', action: 'corpus_search', action_input: { query: `warehouse ${index} location` } },
      { thought: 'Multiply crates by mass.', action: 'python', action_input: { code: `${random.int(100, 999)} * ${random.int(5, 60)} / 1000` } },
    ],
    action: { thought: 'Both facts are known; answer.', action: 'finish', action_input: `${random.int(1, 60)} tonnes, Lyon` },
  }));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = [];
for (const preset of presets) {
  const plan = plans[preset];
  const setupStart = performance.now();
  const prm = await createPrm({ backbone: { kind: 'random', preset, seed: 0 }, device: 'cpu', batchSize: 16, maxTokens: 512 });
  const setupMs = performance.now() - setupStart;
  const inputs = steps(plan.steps);
  const tokens = inputs.map((input) => prm.encode(renderStepInput(input)).length);
  await prm.score(inputs.slice(0, 2)); // warm-up
  const latencies = [];
  for (let i = 0; i < plan.singles; i++) {
    const start = performance.now();
    await prm.score([inputs[i % inputs.length]]);
    latencies.push(performance.now() - start);
  }
  let batchedMs = 0;
  for (let r = 0; r < plan.repeats; r++) {
    const start = performance.now();
    await prm.score(inputs);
    batchedMs += performance.now() - start;
  }
  const batchedPerSecond = (plan.steps * plan.repeats) / (batchedMs / 1000);
  const sequentialStart = performance.now();
  for (const input of inputs) await prm.score([input]);
  const sequentialPerSecond = plan.steps / ((performance.now() - sequentialStart) / 1000);
  await prm.release();
  results.push({
    preset,
    hiddenSize: prm.model.config.hiddenSize,
    layers: prm.model.config.numHiddenLayers,
    meanTokensPerStep: Math.round(tokens.reduce((a, b) => a + b, 0) / tokens.length),
    setupSeconds: +(setupMs / 1000).toFixed(1),
    singleScoreMedianMs: +median(latencies).toFixed(1),
    batchedStepsPerSecond: +batchedPerSecond.toFixed(2),
    sequentialStepsPerSecond: +sequentialPerSecond.toFixed(2),
    batchingSpeedup: +(batchedPerSecond / sequentialPerSecond).toFixed(2),
  });
  console.log(JSON.stringify(results.at(-1)));
}
console.log(`node ${process.version}, ${(await import('node:os')).cpus().length} CPUs, load ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
