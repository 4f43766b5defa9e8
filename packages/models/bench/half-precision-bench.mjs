// Half-precision base weights against float32 on the CPU (issue #32), in one run:
//   accuracy  completion log-probs and the LoRA gradients of the mean completion NLL, with the base
//             weights held as float32 and as float16 (cast to float32 at each use), from the same
//             float32 folder of random weights (so float16 rounds every weight); the largest
//             log-prob difference and each LoRA matrix's gradient error relative to its norm;
//             the time of each (one warm-up, then the median of --steps).
//   rss       the peak RSS (VmHWM, /usr/bin/time) of `agentflow model logprobs` with --dtype float32
//             and --dtype float16, each in a child process of its own, on a bfloat16 folder (as
//             Qwen3 checkpoints are published) and on the float32 one.
// Shapes: 25m (bench/pytorch-compare.mjs's: hidden 512, 8 layers, vocabulary 4096, tied) and 0.6b
// (Qwen3-0.6B's config: hidden 1024, 28 layers, vocabulary 151936, tied), random weights.
// Usage: node bench/half-precision-bench.mjs [--shapes 25m,0.6b] [--only accuracy,rss] [--batch 2]
//          [--prompt 32] [--completion 32] [--steps 3] [--threads 2] [--keep]
// Needs the built packages (pnpm --filter @agentflow/models build) and, for rss, the trainer's dist/cli.js.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import {
  createCausalLm,
  createLoraAdapter,
  createPolicyTrainer,
  createRandomModel,
  getModelPreset,
  loadPolicyModel,
  loraLayoutOf,
  nllObjective,
  saveModelFolder,
} from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', '..', 'apps', 'trainer', 'dist', 'cli.js');
const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
const number = (name, fallback) => Number(args[name] ?? fallback);
const shapes = (args.shapes ?? '25m,0.6b').split(',');
const tasks = (args.only ?? 'accuracy,rss').split(',');
const steps = number('steps', 3);
const threads = number('threads', 2);
const sizes = { batch: number('batch', 2), prompt: number('prompt', 32), completion: number('completion', 32) };

const configs = {
  '25m': { ...getModelPreset('tiny'), vocabSize: 4096, hiddenSize: 512, intermediateSize: 1536, numHiddenLayers: 8, numAttentionHeads: 8, numKeyValueHeads: 4, headDim: 64, ropeTheta: 1000000, tieWordEmbeddings: true, eosTokenIds: [1] },
  '0.6b': getModelPreset('qwen3-0.6b-shape'),
};

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function batchOf(config) {
  const random = createRandom(11);
  const ids = (length) => Array.from({ length }, () => 2 + Math.floor(random.next() * (config.vocabSize - 2)));
  const promptIds = Array.from({ length: sizes.batch }, () => ids(sizes.prompt));
  const completionIds = Array.from({ length: sizes.batch }, () => ids(sizes.completion));
  const weight = 1 / (sizes.batch * sizes.completion);
  return { promptIds, completionIds, tokenWeights: completionIds.map((row) => row.map(() => weight)), objective: { kind: 'nll' } };
}

async function timed(run) {
  await run();
  const times = [];
  let result;
  for (let step = 0; step < steps; step++) {
    const start = performance.now();
    result = await run();
    times.push(performance.now() - start);
  }
  return { result, ms: median(times) };
}

async function accuracy(name, config, dir) {
  const runtime = createRuntime({ device: 'cpu', intraOpThreads: threads });
  const batch = batchOf(config);
  const lora = { rank: 8, alpha: 16 };
  const adapter = createLoraAdapter(config, lora, 1);
  const random = createRandom(2);
  for (const matrices of adapter.matrices.values()) for (let i = 0; i < matrices.b.length; i++) matrices.b[i] = 0.02 * random.normal();
  const side = async (dtype) => {
    const model = await loadPolicyModel(dir, { dtype, device: 'cpu' });
    const lm = await createCausalLm({ model, runtime, lora });
    const scores = await timed(() => lm.logprobs(batch, { adapter }));
    await lm.release();
    const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives: [nllObjective] });
    const step = await timed(() => trainer.run(batch, adapter));
    await trainer.release();
    return { logprobs: scores.result.logprobs.flat(), logprobsMs: scores.ms, gradients: step.result.gradients, loss: step.result.stats.loss, stepMs: step.ms };
  };
  const exact = await side('float32');
  const half = await side('float16');
  const logprobError = Math.max(...exact.logprobs.map((value, index) => Math.abs(value - half.logprobs[index])));
  let worst = { name: '', error: 0 };
  for (const [key, gradient] of exact.gradients) {
    const other = half.gradients.get(key);
    let difference = 0;
    let norm = 0;
    gradient.forEach((value, index) => {
      difference += (value - other[index]) ** 2;
      norm += value ** 2;
    });
    const error = Math.sqrt(difference / norm);
    if (error > worst.error) worst = { name: key, error };
  }
  console.log(
    `${name} accuracy (${sizes.batch} x (${sizes.prompt} + ${sizes.completion}) tokens, LoRA rank 8 on every linear, ${threads} threads):\n` +
      `  log-probs: max |float16 - float32| = ${logprobError.toExponential(2)} (limit 2e-2); time ${half.logprobsMs.toFixed(0)} ms float16 vs ${exact.logprobsMs.toFixed(0)} ms float32 (${(half.logprobsMs / exact.logprobsMs).toFixed(2)}x)\n` +
      `  LoRA step: loss ${half.loss.toFixed(5)} vs ${exact.loss.toFixed(5)}; worst gradient error relative to its norm ${worst.error.toExponential(2)} (${worst.name}; limit 2e-2); time ${half.stepMs.toFixed(0)} ms vs ${exact.stepMs.toFixed(0)} ms (${(half.stepMs / exact.stepMs).toFixed(2)}x)`,
  );
}

function peakRss(dir, input, dtype) {
  const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, cli, 'model', 'logprobs', '--model', dir, '--input', input, '--device', 'cpu', '--dtype', dtype], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (run.status !== 0) throw new Error(`agentflow model logprobs --dtype ${dtype} failed: ${run.stderr.slice(-2000)}`);
  return Number(run.stderr.trim().split('\n').pop()) / 1024; // MiB
}

function rss(name, config, folders, root) {
  const batch = batchOf(config);
  const input = join(root, 'input.json');
  writeFileSync(input, JSON.stringify({ prompt_ids: batch.promptIds, completion_ids: batch.completionIds }));
  for (const [kind, dir] of Object.entries(folders)) {
    const float32 = peakRss(dir, input, 'float32');
    const float16 = peakRss(dir, input, 'float16');
    console.log(`${name} rss, ${kind} folder: agentflow model logprobs peak RSS ${float16.toFixed(0)} MiB with --dtype float16, ${float32.toFixed(0)} MiB with float32: ${(float16 / float32).toFixed(2)}x (target <= 0.70x)`);
  }
}

const loadavg = () => spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
console.log(`load before: ${loadavg()}`);
for (const name of shapes) {
  const config = configs[name];
  const root = mkdtempSync(join(tmpdir(), `agentflow-half-${name}-`));
  try {
    const model = createRandomModel(config, 7);
    const float32Dir = join(root, 'float32');
    await saveModelFolder(float32Dir, model, { tokenizer: null });
    const bfloat16Dir = join(root, 'bfloat16');
    if (tasks.includes('rss')) await saveModelFolder(bfloat16Dir, model, { tokenizer: null, dtype: 'bfloat16' });
    model.weights.clear();
    if (tasks.includes('accuracy')) await accuracy(name, config, float32Dir);
    if (tasks.includes('rss')) rss(name, config, { bfloat16: bfloat16Dir, float32: float32Dir }, root);
  } finally {
    if (args.keep === 'true') console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}
console.log(`load after: ${loadavg()}`);
