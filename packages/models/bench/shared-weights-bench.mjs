// One copy of the weights for a model's sessions (issue #32), measured on the CPU: a policy's
// inference session (log-probs) and its LoRA training session, opened under each of the runtime's
// weight placements, each placement in a child process of its own:
//   per-session  initializers, one copy per ONNX Runtime session (CUDA's placement before)
//   shared       initializers held once: both graphs are If branches of one session (CUDA's default now)
//   fed          weights fed in place from their arrays on every run (the CPU's default)
// Each child loads random weights (float16 matrices by default, as a bf16 checkpoint is held on
// the CPU), opens the inference session, scores a batch, opens the trainer (which with 'shared'
// rebuilds the session with both graphs), runs one training step, scores again; it reports its
// peak RSS (VmHWM) and the median time of 3 log-prob runs and 3 training steps after the first.
// Usage: node bench/shared-weights-bench.mjs [--shape 0.6b] [--layers 28] [--dtype float16]
//          [--batch 2] [--prompt 64] [--completion 64] [--threads 2]
// Needs the built packages (pnpm --filter @agentflow/models build).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { createCausalLm, createLoraAdapter, createPolicyTrainer, expectedWeightShapes, loraLayoutOf, nllObjective } from '../dist/index.js';
import { fastRandomModel } from '../../../scripts/gpu/random-weights.mjs';
import { BENCH_SHAPES } from './bench-shapes.mjs';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
const shape = args.shape ?? '0.6b';
const base = BENCH_SHAPES[shape];
if (!base) throw new Error(`--shape must be one of ${Object.keys(BENCH_SHAPES).join(', ')}, got ${JSON.stringify(shape)}.`);
const config = { ...base, numHiddenLayers: Number(args.layers ?? base.numHiddenLayers) };
const dtype = args.dtype ?? 'float16';
const threads = Number(args.threads ?? 2);
const sizes = { batch: Number(args.batch ?? 2), prompt: Number(args.prompt ?? 64), completion: Number(args.completion ?? 64) };
const placements = ['per-session', 'shared', 'fed'];

const mib = (kilobytes) => (kilobytes / 1024).toFixed(0);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function child(placement) {
  const random = createRandom(11);
  const ids = (length) => Array.from({ length }, () => 2 + Math.floor(random.next() * (config.vocabSize - 2)));
  const completionIds = Array.from({ length: sizes.batch }, () => ids(sizes.completion));
  const batch = {
    promptIds: Array.from({ length: sizes.batch }, () => ids(sizes.prompt)),
    completionIds,
    tokenWeights: completionIds.map((row) => row.map(() => 1 / (sizes.batch * sizes.completion))),
    objective: { kind: 'nll' },
  };
  const model = fastRandomModel(config, expectedWeightShapes(config), 1, dtype);
  const runtime = createRuntime({ device: 'cpu', intraOpThreads: threads, weightPlacement: placement });
  const adapter = createLoraAdapter(config, { rank: 8, alpha: 16 }, 1);
  const lm = await createCausalLm({ model, runtime, lora: { rank: 8, alpha: 16 } });
  const first = (await lm.logprobs(batch, { adapter })).logprobs;
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives: [nllObjective], recompute: true });
  await trainer.run(batch, adapter);
  const again = (await lm.logprobs(batch, { adapter })).logprobs;
  const timed = async (work) => {
    const times = [];
    for (let round = 0; round < 3; round += 1) {
      const start = performance.now();
      await work();
      times.push(performance.now() - start);
    }
    return median(times);
  };
  const logprobMs = await timed(() => lm.logprobs(batch, { adapter }));
  const stepMs = await timed(() => trainer.run(batch, adapter));
  const drift = Math.max(...first.flatMap((row, index) => row.map((value, position) => Math.abs(value - again[index][position]))));
  const weightBytes = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.byteLength, 0);
  const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  const copies = runtime.sharedWeightCopies().map((copy) => copy.sessions.join(' + '));
  console.log(JSON.stringify({ placement, peakKiB: peak, weightBytes, logprobMs, stepMs, drift, copies, firstLogprob: first[0][0] }));
}

if (args.child) {
  await child(args.child);
} else {
  console.log(
    `shape ${shape} (${config.numHiddenLayers} layers), ${dtype} weights, LoRA rank 8, ${sizes.batch} x (${sizes.prompt} + ${sizes.completion}) tokens, ${threads} threads; each placement in its own process`,
  );
  const results = placements.map((placement) => {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2), '--child', placement], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (run.status !== 0) throw new Error(`child ${placement} failed:\n${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').at(-1));
  });
  const reference = results[0];
  console.log(`weights: ${(reference.weightBytes / 2 ** 20).toFixed(0)} MiB`);
  for (const result of results) {
    console.log(
      `${result.placement.padEnd(12)} peak RSS ${mib(result.peakKiB).padStart(6)} MiB (${(result.peakKiB / reference.peakKiB).toFixed(2)}x per-session)` +
        `  log-probs ${result.logprobMs.toFixed(0)} ms  training step ${result.stepMs.toFixed(0)} ms` +
        `  first log-prob ${result.firstLogprob.toFixed(6)}  drift after the trainer joined ${result.drift.toExponential(1)}` +
        (result.copies.length > 0 ? `  shared copies: ${result.copies.join('; ')}` : ''),
    );
  }
  const [perSession, shared] = results;
  console.log(`shared saves ${mib(perSession.peakKiB - shared.peakKiB)} MiB of peak RSS against per-session (the weights are ${(reference.weightBytes / 2 ** 20).toFixed(0)} MiB)`);
}
