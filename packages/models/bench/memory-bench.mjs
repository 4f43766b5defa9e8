// Peak memory of one process that holds every session of one model: generation and log-prob
// scoring (the inference graph with an adapter), the reference (a second inference session with
// no adapter, as DAPO's KL term uses), a LoRA training step and a PRM-style scalar-head scorer,
// all over the same random weights. Reports each stage's resident memory, the float32 weight
// bytes, the activation memory each session's first run added, and the peak against
// 1.5 x weights + activations. `--training-sweep` instead measures the training step alone, in
// fresh processes, at several sequence lengths with the same token budget. `--training full`
// instead measures one process of a full-parameter policy (every weight trained): its inference
// session, a frozen reference copy with its own session, log-probs under both, and three steps of
// accumulateGradients (forward and the gradient of every weight) and applyGradients (AdamW over
// every weight), against planMemory with fullTraining: { reference: 'copy' }.
// Usage: node bench/memory-bench.mjs [--preset qwen3-0.6b-shape] [--batch 2] [--prompt 24]
//        [--completion 8] [--json out.json] | --training-sweep 256,1024 --token-budget 1024
//        | --training full [--batch 2 --prompt 24 --completion 8] [--recompute on]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '@agentflow/tensor';
import {
  createCausalLm,
  createLocalPolicy,
  createLoraAdapter,
  createPolicyTrainer,
  createRandomModel,
  createScalarHead,
  createScalarHeadModel,
  generate,
  getModelPreset,
  loraLayoutOf,
  nllObjective,
  planMemory,
} from '../dist/index.js';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1] ?? 'true';
});
const preset = args.preset ?? 'qwen3-0.6b-shape';
const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);
/** Resident and peak resident bytes of this process, from /proc. */
function memory() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}
const ids = (rows, length, vocab, salt) =>
  Array.from({ length: rows }, (_, row) => Array.from({ length }, (_, k) => (row * 7919 + k * 104729 + salt) % Math.min(vocab, 50000)));

if (args['training-sweep']) {
  // Parent: one fresh process per sequence length, so each peak is the training step's own.
  const budget = Number(args['token-budget'] ?? 1024);
  const rows = [];
  for (const length of args['training-sweep'].split(',').map(Number)) {
    const batch = Math.max(1, Math.floor(budget / length));
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--preset', preset, '--training-only', 'true', '--recompute', args.recompute ?? 'off', '--batch', String(batch), '--prompt', String(length / 2), '--completion', String(length / 2)], { encoding: 'utf8' });
    const result = JSON.parse(out.trim().split('\n').pop());
    rows.push({ length, batch, ...result });
    console.error(`sequence ${length} x batch ${batch}: training step added ${mib(result.activationBytes)} MiB`);
  }
  console.log(`recompute ${args.recompute ?? 'off'}, token budget ${budget}, completion = half of each sequence`);
  console.log(`| sequence length | rows | tokens | vocab x sequence x rows (float32) | training step activations | peak RSS | second step s |`);
  console.log(`|---:|---:|---:|---:|---:|---:|---:|`);
  const config = getModelPreset(preset);
  const vocab = config.vocabSize;
  for (const row of rows) {
    const plan = planMemory({
      device: 'cpu',
      availableBytes: 2 ** 40,
      models: [{ name: 'm', config, sessions: [{ kind: 'training', name: 't', rows: row.batch, tokens: row.length * row.batch, completionTokens: (row.length / 2) * row.batch, recompute: args.recompute === 'on' }] }],
    });
    const predicted = plan.rows.find((entry) => entry.part === 't (activations)').bytes;
    console.log(`| ${row.length} | ${row.batch} | ${row.length * row.batch} | ${mib(vocab * row.length * row.batch * 4)} MiB | ${mib(row.activationBytes)} MiB (plan ${mib(predicted)}) | ${mib(row.peak)} MiB | ${row.stepSeconds.toFixed(2)} |`);
  }
  process.exit(0);
}

if (args.training === 'full') {
  await fullTrainingBench();
  process.exit(0);
}

const config = getModelPreset(preset);
const batch = Number(args.batch ?? 2);
const prompt = Number(args.prompt ?? 24);
const completion = Number(args.completion ?? 8);
const stages = [];
const stage = (name, extra = {}) => {
  const now = memory();
  stages.push({ name, ...now, ...extra });
  if (!args['training-only']) console.error(`${name}: RSS ${mib(now.rss)} MiB, peak ${mib(now.peak)} MiB`);
  return now;
};
stage('start');
const model = createRandomModel(config, 1);
const weightBytes = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.byteLength, 0);
const afterWeights = stage('random weights');
const runtime = createRuntime({
  device: 'cpu',
  ...(args.arena ? { cpuMemoryArena: args.arena === 'on' } : {}),
  ...(args.pattern ? { memoryPattern: args.pattern === 'on' } : {}),
});
const lora = { rank: 8, alpha: 16 };
const scoring = { promptIds: ids(batch, prompt, config.vocabSize, 1), completionIds: ids(batch, completion, config.vocabSize, 2) };
const adapter = createLoraAdapter(config, lora, 2);
let activationBytes = 0;
/** Runs `work` once and counts what its first run added to the peak as that session's activations. */
async function firstRun(name, work) {
  const before = memory();
  await work();
  const after = stage(name);
  const added = Math.max(0, after.peak - Math.max(before.peak, before.rss));
  activationBytes += added;
  stages[stages.length - 1].added = added;
}

if (args['training-only']) {
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives: [nllObjective], recompute: args.recompute === 'on' });
  const tokens = batch * completion;
  const trainingBatch = { ...scoring, tokenWeights: scoring.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } };
  await firstRun('training step', () => trainer.run(trainingBatch, adapter));
  const started = performance.now();
  await trainer.run(trainingBatch, adapter);
  const stepSeconds = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ activationBytes, peak: memory().peak, weightBytes, afterWeights: afterWeights.rss, stepSeconds }));
  process.exit(0);
}

const policy = await createCausalLm({ model, runtime, lora });
stage('inference session (generation, log-probs)');
await firstRun('log-probs', () => policy.logprobs(scoring, { adapter, entropy: true }));
await firstRun('generation', () =>
  generate(policy, scoring.promptIds.map((promptIds) => ({ promptIds, maxTokens: 4, temperature: 1, seed: 3 })), { eosTokenIds: [], adapter }),
);
const reference = await createCausalLm({ model, runtime });
stage('reference session');
await firstRun('reference log-probs', () => reference.logprobs(scoring));
const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives: [nllObjective], recompute: args.recompute === 'on' });
const tokens = batch * completion;
const trainingBatch = { ...scoring, tokenWeights: scoring.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } };
await firstRun('training step (LoRA r=8, all linears)', () => trainer.run(trainingBatch, adapter));
const scorer = createScalarHeadModel({ model, runtime, lora: loraLayoutOf(config, adapter.config) });
const head = createScalarHead(config, 3);
await firstRun('scalar-head scoring (PRM)', () =>
  scorer.score({ inputIds: scoring.promptIds.map((row, index) => [...row, ...scoring.completionIds[index]]), positions: scoring.promptIds.map(() => [prompt + completion - 1]) }, head, adapter),
);
// Later runs: steady state, nothing new should be allocated.
const steadyStart = performance.now();
for (let repeat = 0; repeat < 2; repeat++) {
  await policy.logprobs(scoring, { adapter });
  await trainer.run(trainingBatch, adapter);
}
const steadySeconds = (performance.now() - steadyStart) / 2000;
const end = stage('two more runs of log-probs and training', { seconds: steadySeconds });
console.error(`steady state: log-probs + training step ${steadySeconds.toFixed(2)} s`);
const baseline = stages[0].rss;
const bound = 1.5 * weightBytes + activationBytes;
console.log(`## ${preset}: one process, four sessions over one copy of the weights (device cpu)`);
console.log(`batch ${batch}, prompt ${prompt} + completion ${completion} tokens; node + ONNX Runtime at start: ${mib(baseline)} MiB`);
console.log('');
console.log('| stage | RSS MiB | peak MiB | first run added MiB |');
console.log('|---|---:|---:|---:|');
for (const row of stages) console.log(`| ${row.name} | ${mib(row.rss)} | ${mib(row.peak)} | ${row.added === undefined ? '' : mib(row.added)} |`);
console.log('');
console.log(`float32 weights W: ${mib(weightBytes)} MiB; activations A (sum of first-run additions): ${mib(activationBytes)} MiB`);
// The same process as @agentflow/models' memory plan sees it.
const plan = planMemory({
  device: 'cpu',
  availableBytes: 2 ** 40,
  cpuArena: args.arena !== 'off',
  models: [
    {
      name: preset,
      config,
      loraRank: lora.rank,
      trained: true,
      sessions: [
        { kind: 'inference', name: 'log-probs and generation', rows: batch, sequence: prompt + completion, scored: completion },
        { kind: 'training', name: 'training step', rows: batch, tokens: batch * (prompt + completion), completionTokens: batch * completion, recompute: args.recompute === 'on' },
        { kind: 'scalar-head', name: 'scalar head', rows: batch, sequence: prompt + completion, training: false },
      ],
    },
  ],
});
const planned = plan.totalBytes;
console.log(`memory plan (planMemory) predicts a peak of ${mib(planned)} MiB; measured ${mib(end.peak)} MiB: ${(((planned - end.peak) / end.peak) * 100).toFixed(1)}%`);
console.log(`peak RSS: ${mib(end.peak)} MiB = ${(end.peak / weightBytes).toFixed(2)} x W; bound 1.5 x W + A = ${mib(bound)} MiB: ${end.peak <= bound ? 'within' : 'OVER'}`);
if (args.json) writeFileSync(args.json, `${JSON.stringify({ preset, batch, prompt, completion, weightBytes, activationBytes, peak: end.peak, stages }, null, 2)}\n`);

/**
 * One process of a full-parameter policy at the preset's shape: the stages' resident and peak
 * memory, and planMemory's prediction of the same process (see the usage line).
 */
async function fullTrainingBench() {
  const config = getModelPreset(preset);
  const batch = Number(args.batch ?? 2);
  const prompt = Number(args.prompt ?? 24);
  const completion = Number(args.completion ?? 8);
  const recompute = args.recompute === 'on';
  const stages = [];
  const stage = (name, began) => {
    const now = { name, ...memory(), ...(began === undefined ? {} : { seconds: (performance.now() - began) / 1000 }) };
    stages.push(now);
    console.error(`${name}: RSS ${mib(now.rss)} MiB, peak ${mib(now.peak)} MiB${now.seconds === undefined ? '' : `, ${now.seconds.toFixed(1)} s`}`);
  };
  stage('start');
  const model = createRandomModel(config, 1);
  const weightBytes = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.byteLength, 0);
  stage('random weights');
  const runtime = createRuntime({ device: 'cpu' });
  const policy = await createLocalPolicy({ model, runtime, trainable: { kind: 'full' }, weightDecay: 0.01, recompute });
  stage('policy (inference session)');
  const reference = policy.frozen();
  stage('frozen reference (a copy of the weights)');
  const scoring = { promptIds: ids(batch, prompt, config.vocabSize, 1), completionIds: ids(batch, completion, config.vocabSize, 2) };
  const tokens = batch * completion;
  const trainingBatch = { ...scoring, tokenWeights: scoring.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } };
  let began = performance.now();
  await reference.logprobs(scoring);
  stage('reference log-probs (its own session)', began);
  began = performance.now();
  await policy.logprobs(scoring);
  stage('policy log-probs', began);
  for (let step = 1; step <= 3; step++) {
    began = performance.now();
    await policy.accumulateGradients(trainingBatch);
    stage(`step ${step}: forward and every weight's gradient`, began);
    began = performance.now();
    await policy.applyGradients({ learningRate: 1e-5 });
    stage(`step ${step}: AdamW over every weight`, began);
    if (step < 3) await policy.logprobs(scoring);
  }
  await policy.release();
  const peak = stages.at(-1).peak;
  console.log(`## ${preset}: full-parameter training, one process (device cpu)`);
  console.log(
    `batch ${batch}, prompt ${prompt} + completion ${completion} tokens${recompute ? ', layers recomputed' : ''}; every weight trained, a frozen reference copy with its own inference session; AdamW (weight decay 0.01)`,
  );
  console.log('');
  console.log('| stage | RSS MiB | peak MiB | seconds |');
  console.log('|---|---:|---:|---:|');
  for (const row of stages) console.log(`| ${row.name} | ${mib(row.rss)} | ${mib(row.peak)} | ${row.seconds === undefined ? '' : row.seconds.toFixed(1)} |`);
  console.log('');
  const plan = planMemory({
    device: 'cpu',
    availableBytes: 2 ** 40,
    models: [{ name: preset, config, fullTraining: { reference: 'copy' }, sessions: fullTrainingSessions(batch, prompt, completion, recompute) }],
  });
  console.log(`float32 weights W: ${mib(weightBytes)} MiB; peak RSS ${mib(peak)} MiB = ${(peak / weightBytes).toFixed(2)} x W`);
  for (const row of plan.rows) console.log(`  plan: ${row.model} ${row.part}: ${mib(row.bytes)} MiB (${row.detail})`);
  console.log(`memory plan (planMemory, fullTraining: { reference: 'copy' }) predicts a peak of ${mib(plan.totalBytes)} MiB; measured ${mib(peak)} MiB: ${(((plan.totalBytes - peak) / peak) * 100).toFixed(1)}%`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify({ preset, batch, prompt, completion, weightBytes, peak, planned: plan.totalBytes, stages }, null, 2)}\n`);
}

/** The sessions of the full-training bench as planMemory takes them (memory-plan.test.ts plans the same). */
function fullTrainingSessions(batch, prompt, completion, recompute) {
  return [
    { kind: 'inference', name: 'log-probs', rows: batch, sequence: prompt + completion, scored: completion },
    { kind: 'training', name: 'training step', rows: batch, tokens: batch * (prompt + completion), completionTokens: batch * completion, recompute },
  ];
}
