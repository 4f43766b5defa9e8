// One measurement of `pnpm gpu:check`, in its own process so that a crash, an out-of-memory
// kill or a time-out loses only that row. Writes what it has so far as JSON to --result after
// every stage. Uses only the public APIs of @agentflow/tensor, @agentflow/models and
// @agentflow/dapo/graph (their built dist/).
//   node scripts/gpu/check-worker.mjs --task correctness --result FILE [--device cuda]
//   node scripts/gpu/check-worker.mjs --task step --shape qwen3-0.6b-shape --batch 8 --prompt 512 --completion 512 [--recompute on] [--dtype bfloat16] --result FILE
//   node scripts/gpu/check-worker.mjs --task generation --shape qwen3-0.6b-shape --rows 16 --prompt 256 --new 128 [--dtype bfloat16] --result FILE
import { writeFileSync } from 'node:fs';
import { clippedSurrogateObjective } from '../../packages/dapo/dist/graph.js';
import {
  createCausalLm,
  createLoraAdapter,
  createPolicyTrainer,
  generate,
  expectedWeightShapes,
  getModelPreset,
  loraLayoutOf,
} from '../../packages/models/dist/index.js';
import { compareGraphsOnCuda, relativeError } from '../../packages/tensor/bench/gpu-check.mjs';
import { buildPeakMatmul, makeFeeds } from '../../packages/tensor/bench/graphs.mjs';
import { createRuntime } from '../../packages/tensor/dist/index.js';
import { fastRandomModel, matmulParameters } from './random-weights.mjs';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const device = args.device ?? 'cuda';
const result = { task: args.task, shape: args.shape, device, stages: [] };
const save = (stage, extra = {}) => {
  Object.assign(result, extra);
  if (stage) result.stages.push({ stage, atS: Number((performance.now() / 1000).toFixed(2)) });
  writeFileSync(args.result, JSON.stringify(result));
};
const log = (line) => console.error(`  [${args.task}${args.shape ? ` ${args.shape}` : ''}] ${line}`);

/** A DAPO-style micro-batch: random ids, token-mean weights, advantages of +-1, old log-probs of a uniform policy. */
function dapoBatch(config, batch, prompt, completion, seed = 7) {
  let state = seed;
  const next = () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
  const rows = (length, value) => Array.from({ length: batch }, () => Array.from({ length }, value));
  const uniformLogprob = -Math.log(config.vocabSize);
  return {
    promptIds: rows(prompt, () => Math.floor(next() * config.vocabSize)),
    completionIds: rows(completion, () => Math.floor(next() * config.vocabSize)),
    tokenWeights: rows(completion, () => 1 / (batch * completion)),
    advantages: Array.from({ length: batch }, (_, row) => Array.from({ length: completion }, () => (row % 2 === 0 ? 1 : -1))),
    oldLogprobs: rows(completion, () => uniformLogprob),
    objective: { kind: 'clipped-surrogate', epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 },
  };
}

const objectives = [clippedSurrogateObjective];

/** A small Qwen3 with the real vocabulary (hidden 256, 2 layers), a LoRA adapter and a DAPO micro-batch. */
function smallQwen3() {
  const config = { ...getModelPreset('qwen3-0.6b-shape'), hiddenSize: 256, intermediateSize: 512, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 64 };
  const adapter = createLoraAdapter(config, { rank: 8, alpha: 16 }, 2);
  // A non-zero B so that the gradients of A are not all zero.
  for (const matrices of adapter.matrices.values()) matrices.b.fill(0.01);
  return { config, adapter, batch: dapoBatch(config, 2, 48, 16) };
}

/** The micro-batch's completion log-probs, then one clipped-surrogate step's loss and LoRA gradients, on `target`. */
async function scoreAndStep({ config, adapter, batch }, model, target) {
  const runtime = createRuntime({ device: target });
  const lm = await createCausalLm({ model, runtime, lora: { rank: 8, alpha: 16 } });
  const logprobs = (await lm.logprobs(batch, { adapter })).logprobs.flat();
  await lm.release();
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives });
  const step = await trainer.run(batch, adapter);
  await trainer.release();
  return { logprobs: Float32Array.from(logprobs), loss: step.stats.loss, gradients: [...step.gradients.values()] };
}

/** Log-probs and LoRA gradients of a small Qwen3 with the real vocabulary, CPU against CUDA. */
async function compareModelOnCuda() {
  const small = smallQwen3();
  const model = fastRandomModel(small.config, expectedWeightShapes(small.config), 3);
  const outputs = {};
  for (const target of ['cpu', device]) outputs[target] = await scoreAndStep(small, model, target);
  const rows = [{ check: 'qwen3 (hidden 256, vocab 151936) log-probs', ...relativeError(outputs.cpu.logprobs, outputs[device].logprobs) }];
  const gradients = outputs.cpu.gradients.map((gradient, index) => relativeError(gradient, outputs[device].gradients[index]));
  rows.push({
    check: 'qwen3 LoRA gradients (clipped surrogate)',
    worst: Math.max(...gradients.map((g) => g.worst)),
    relative: Math.max(...gradients.map((g) => g.relative)),
  });
  rows.push({ check: 'qwen3 loss', ...relativeError([outputs.cpu.loss], [outputs[device].loss]) });
  // Half precision on CUDA is allowed: bf16 has an 8-bit mantissa.
  return rows.map((row) => ({ ...row, output: '', ok: row.relative <= 5e-2 }));
}

/**
 * The same small Qwen3 with its matrices held in half precision (bfloat16 on CUDA, float16 on the
 * CPU, whose Node.js binding cannot feed bfloat16), against float32 on the same device: log-probs
 * within 2e-2 and LoRA gradients within 2e-2 of their norm, issue #32's bounds. The weights are the
 * float32 ones rounded, so the difference is the rounding of the weights alone.
 */
async function compareHalfWeights() {
  const half = device === 'cuda' ? 'bfloat16' : 'float16';
  const small = smallQwen3();
  const outputs = {};
  for (const dtype of ['float32', half]) outputs[dtype] = await scoreAndStep(small, fastRandomModel(small.config, expectedWeightShapes(small.config), 3, dtype), device);
  const logprobs = relativeError(outputs.float32.logprobs, outputs[half].logprobs);
  const gradients = outputs.float32.gradients.map((gradient, index) => gradientError(gradient, outputs[half].gradients[index]));
  return [
    { check: `${half} weights: log-probs against float32`, output: 'max abs', ...logprobs, ok: logprobs.worst <= 2e-2 },
    { check: `${half} weights: LoRA gradients against float32`, output: '|d| / |g|, worst', worst: Math.max(...gradients), relative: Math.max(...gradients), ok: Math.max(...gradients) <= 2e-2 },
  ];
}

/** ||a - b|| / ||a||: a gradient's error relative to its norm. */
function gradientError(exact, other) {
  let difference = 0;
  let norm = 0;
  for (let i = 0; i < exact.length; i++) {
    difference += (exact[i] - other[i]) ** 2;
    norm += exact[i] ** 2;
  }
  return Math.sqrt(difference / (norm || 1));
}

async function peakMatmul(n) {
  const graph = buildPeakMatmul(n);
  const session = await createRuntime({ device }).createSession(graph.bytes, { name: `matmul-${n}` });
  const feeds = makeFeeds(graph.inputs);
  await session.run(feeds);
  const t0 = performance.now();
  const repeats = 5;
  for (let i = 0; i < repeats; i++) await session.run(feeds);
  const seconds = (performance.now() - t0) / 1000 / repeats;
  await session.release();
  // Includes copying 3 x n^2 floats between host and device each run.
  return { n, seconds, tflops: graph.flops / seconds / 1e12 };
}

async function correctness() {
  const rows = device === 'cuda' ? await compareGraphsOnCuda() : [];
  save('graphs compared', { rows });
  rows.push(...(await compareModelOnCuda()));
  save('model compared', { rows });
  rows.push(...(await compareHalfWeights()));
  save('half-precision weights compared', { rows });
  save('peak matmul', { peakMatmul: await peakMatmul(device === 'cuda' ? 8192 : 1024) });
}

async function step() {
  const config = getModelPreset(args.shape);
  const [batch, prompt, completion] = [Number(args.batch), Number(args.prompt), Number(args.completion)];
  let t0 = performance.now();
  const model = fastRandomModel(config, expectedWeightShapes(config), 1, args.dtype ?? 'float32');
  const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  save('random weights', { parameters, dtype: args.dtype ?? 'float32', matmulParameters: matmulParameters(config, model.weights), weightsS: (performance.now() - t0) / 1000 });
  log(`${(parameters / 1e9).toFixed(2)}B parameters filled in ${result.weightsS.toFixed(1)} s`);
  const adapter = createLoraAdapter(config, { rank: 8, alpha: 16 }, 2);
  const runtime = createRuntime({ device, logger: { warn: (line) => log(line) } });
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives, recompute: args.recompute === 'on' });
  const micro = dapoBatch(config, batch, prompt, completion);
  // The policy's inference session first, as a run opens it: the trainer's graph then joins its
  // weights (one session with both graphs as branches, one device copy: weightPlacement 'shared').
  const lm = await createCausalLm({ model, runtime, lora: { rank: 8, alpha: 16 } });
  const scored = async () => (await lm.logprobs(micro, { adapter })).logprobs.flat();
  const before = await scored();
  t0 = performance.now();
  const first = await trainer.run(micro, adapter);
  save('session + first step', { firstStepS: (performance.now() - t0) / 1000, resolvedDevice: runtime.device, loss: first.stats.loss });
  log(`session + first step ${result.firstStepS.toFixed(1)} s on ${runtime.device}, loss ${first.stats.loss.toFixed(4)}`);
  const times = [];
  for (let i = 0; i < Number(args.steps ?? 3); i++) {
    t0 = performance.now();
    await trainer.run(micro, adapter);
    times.push((performance.now() - t0) / 1000);
    save('step', { stepTimesS: times });
  }
  const after = await scored();
  save('one session for both graphs', {
    weightCopies: runtime.sharedWeightCopies().map((copy) => ({ sessions: copy.sessions, gib: copy.bytes / 2 ** 30 })),
    logprobDriftAfterJoin: Math.max(...after.map((value, index) => Math.abs(value - before[index]))),
  });
  log(`weight copies: ${result.weightCopies.map((copy) => `${copy.sessions.join(' + ')} ${copy.gib.toFixed(2)} GiB`).join('; ')}; log-prob drift after the trainer joined ${result.logprobDriftAfterJoin}`);
  await lm.release();
  await trainer.release();
  const sorted = [...times].sort((a, b) => a - b);
  const tokens = batch * (prompt + completion);
  const stepS = sorted[Math.floor(sorted.length / 2)];
  save('done', { tokens, stepS, tokensPerS: tokens / stepS, flopsPerStep: 4 * result.matmulParameters * tokens, peakRssMiB: process.resourceUsage().maxRSS / 1024 });
}

/**
 * Batched sampling with the KV cache, as rollouts run (issue #32's benchmark: 16 rows, 256-token
 * prompts, 128 new tokens, temperature 1): one warm-up generation, then the median of --repeats.
 * Every row runs all --new steps (no EOS among the ids drawn from the top of the vocabulary).
 */
async function generation() {
  const config = getModelPreset(args.shape);
  const [rows, prompt, fresh] = [Number(args.rows), Number(args.prompt), Number(args.new)];
  let t0 = performance.now();
  const model = fastRandomModel(config, expectedWeightShapes(config), 1, args.dtype ?? 'float32');
  save('random weights', { dtype: args.dtype ?? 'float32', weightsS: (performance.now() - t0) / 1000 });
  const runtime = createRuntime({ device, logger: { warn: (line) => log(line) } });
  const lm = await createCausalLm({ model, runtime });
  let state = 5;
  const promptIds = Array.from({ length: rows }, () =>
    Array.from({ length: prompt }, () => {
      state = (state * 16807) % 2147483647;
      return 2 + (state % (config.vocabSize - 2));
    }),
  );
  const run = (round) => generate(lm, promptIds.map((ids, row) => ({ promptIds: ids, maxTokens: fresh, temperature: 1, seed: 100 * round + row })), { eosTokenIds: [] });
  t0 = performance.now();
  await run(0);
  save('session + first generation', { firstGenerationS: (performance.now() - t0) / 1000, resolvedDevice: runtime.device });
  log(`session + first generation ${result.firstGenerationS.toFixed(1)} s on ${runtime.device}`);
  const times = [];
  for (let round = 1; round <= Number(args.repeats ?? 2); round++) {
    t0 = performance.now();
    await run(round);
    times.push((performance.now() - t0) / 1000);
    save('generation', { generationTimesS: times });
  }
  await lm.release();
  const generationS = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
  save('done', { tokens: rows * fresh, generationS, tokensPerS: (rows * fresh) / generationS, peakRssMiB: process.resourceUsage().maxRSS / 1024 });
}

const TASKS = { correctness, step, generation };
try {
  if (!(args.task in TASKS)) throw new Error(`--task must be one of ${Object.keys(TASKS).join(', ')}, got ${JSON.stringify(args.task)}.`);
  await TASKS[args.task]();
} catch (error) {
  save('failed', { error: `${error.code ? `${error.code}: ` : ''}${error.message}` });
  log(`failed: ${error.message}`);
  process.exitCode = 1;
}
