// `pnpm gpu:check`: on a machine with an NVIDIA GPU and the CUDA provider (`pnpm gpu:setup`),
// (a) checks CUDA outputs against the CPU (tensor bench graphs; a small Qwen3's log-probs, loss
// and LoRA gradients; the same model's bf16 weights against float32), (b) measures a LoRA
// DAPO-style training step (clipped surrogate, forward + backward through @agentflow/models'
// policy training graph, attention in blocks of rows) at the Qwen3-0.6B shape with float32 and
// bf16 weights and at the Qwen3-8B shape with bf16 weights, random weights: step time, tokens/s,
// MFU, peak GPU memory, (c) measures rollout generation (16 rows, 256-token prompts, 128 new
// tokens, KV cache) at the Qwen3-0.6B shape, float32 and bf16: tokens/s. Each measurement runs
// in its own worker process (scripts/gpu/check-worker.mjs) within a time budget.
// Usage: pnpm gpu:check [--out FILE.json] [--shapes qwen3-0.6b-shape,qwen3-8b-shape] [--budget-s 450]
//        [--device cpu  (a dry run of the measurements on the CPU, tiny plans, no preflight)]
// Exit codes: 0 all checks passed; 1 a check failed or a measurement did not finish;
//             2 usage or unbuilt packages; 3 no GPU path here (says exactly what is missing).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { preflight } from './gpu/preflight.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const EXIT = { ok: 0, failed: 1, usage: 2, missing: 3 };
/** H200 SXM dense peaks (no sparsity), TFLOP/s. */
const PEAK = { bf16: 989, tf32: 494 };
/**
 * Micro-batches per shape: rows x (prompt + completion) tokens, and whether the training graph
 * recomputes layer activations (the 8B step needs it: about 390 GB of kept activations by the
 * memory plan, 16 GB recomputed). The CPU dry run uses small ones.
 */
const PLANS = {
  cuda: [
    { shape: 'qwen3-0.6b-shape', dtype: 'float32', batch: 8, prompt: 512, completion: 512, recompute: false },
    { shape: 'qwen3-0.6b-shape', dtype: 'bfloat16', batch: 8, prompt: 512, completion: 512, recompute: false },
    { shape: 'qwen3-8b-shape', dtype: 'bfloat16', batch: 4, prompt: 512, completion: 512, recompute: true },
  ],
  // The CPU's Node.js binding cannot feed bfloat16: its dry run holds float16 weights instead.
  cpu: [
    { shape: undefined, dtype: 'float32', batch: 2, prompt: 24, completion: 8, recompute: false },
    { shape: undefined, dtype: 'float16', batch: 2, prompt: 24, completion: 8, recompute: false },
  ],
};
/** Rollout generation: issue #32's benchmark sizes on CUDA, small ones in the CPU dry run. */
const GENERATION_PLANS = {
  cuda: [
    { shape: 'qwen3-0.6b-shape', dtype: 'float32', rows: 16, prompt: 256, new: 128 },
    { shape: 'qwen3-0.6b-shape', dtype: 'bfloat16', rows: 16, prompt: 256, new: 128 },
  ],
  cpu: [
    { shape: undefined, dtype: 'float32', rows: 2, prompt: 8, new: 4 },
    { shape: undefined, dtype: 'float16', rows: 2, prompt: 8, new: 4 },
  ],
};

const args = { out: undefined, shapes: 'qwen3-0.6b-shape,qwen3-8b-shape', 'budget-s': '450', device: 'cuda', steps: '3' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i]?.replace(/^--/, '');
  if (!argv[i]?.startsWith('--') || !(key in args) || argv[i + 1] === undefined) {
    console.error(`gpu:check: unexpected argument ${JSON.stringify(argv[i])}; expected --out FILE, --shapes A,B, --budget-s N, --steps N or --device cuda|cpu.`);
    process.exit(EXIT.usage);
  }
  args[key] = argv[i + 1];
}
const report = { startedAt: new Date().toISOString(), device: args.device, peakTflops: PEAK, ran: false };
const finish = (code) => {
  report.exitCode = code;
  if (args.out) writeFileSync(resolve(args.out), `${JSON.stringify(report, null, 2)}\n`);
  process.exit(code);
};

const dists = ['packages/tensor/dist/index.js', 'packages/models/dist/index.js', 'packages/dapo/dist/graph.js'];
const unbuilt = dists.filter((path) => !existsSync(join(root, path)));
if (unbuilt.length > 0) {
  console.error(`gpu:check: ${unbuilt.join(', ')} missing: run \`pnpm build\` first.`);
  finish(EXIT.usage);
}
const tensor = await import(join(root, 'packages/tensor/dist/index.js'));
let workerEnv = process.env;
if (args.device === 'cuda') {
  const check = preflight(tensor);
  for (const line of check.lines) console.log(line);
  Object.assign(report, { gpus: check.gpus, provider: check.provider ?? null, libraries: check.libraries });
  if (check.problems.length > 0) {
    report.missing = check.problems;
    console.log(`\ngpu:check cannot run here: ${check.problems.join('; ')}.`);
    finish(EXIT.missing);
  }
  workerEnv = { ...process.env, LD_LIBRARY_PATH: check.ldLibraryPath };
}

/** Polls nvidia-smi's memory.used (MiB) every 200 ms; returns a stop function giving the peak. */
function pollGpuMemory() {
  if (args.device !== 'cuda') return () => undefined;
  let peak = 0;
  const poller = spawn('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits', '-lms', '200'], { stdio: ['ignore', 'pipe', 'ignore'] });
  poller.stdout.on('data', (chunk) => {
    for (const line of String(chunk).split('\n')) if (line.trim()) peak = Math.max(peak, Number(line.split(',')[0]));
  });
  poller.on('error', () => undefined);
  return () => {
    poller.kill();
    return peak;
  };
}

const scratch = mkdtempSync(join(tmpdir(), 'agentflow-gpu-check-'));
const started = performance.now();
const budgetS = Number(args['budget-s']);

/** Runs one worker until it ends or the budget is spent; returns its last saved result. */
async function runWorker(task, extra = []) {
  const resultPath = join(scratch, `${task}-${extra.join('-').replace(/[^\w.-]/g, '')}.json`);
  const leftS = budgetS - (performance.now() - started) / 1000;
  if (leftS < 20) return { task, error: `skipped: the ${budgetS} s budget is spent` };
  const stopPolling = pollGpuMemory();
  const baseline = args.device === 'cuda' ? await new Promise((done) => setTimeout(() => done(stopPolling()), 600)) : undefined;
  const stopPeak = pollGpuMemory();
  const workerStarted = performance.now();
  const child = spawn(process.execPath, [join(root, 'scripts/gpu/check-worker.mjs'), '--task', task, '--device', args.device, '--result', resultPath, ...extra], {
    env: workerEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), leftS * 1000);
  const [code, signal] = await new Promise((done) => child.on('exit', (...exit) => done(exit)));
  clearTimeout(timer);
  const peak = stopPeak();
  const result = existsSync(resultPath) ? JSON.parse(readFileSync(resultPath, 'utf8')) : { task };
  result.wallS = (performance.now() - workerStarted) / 1000;
  if (peak !== undefined) Object.assign(result, { gpuMemoryPeakMiB: peak, gpuMemoryBaselineMiB: baseline });
  if (code !== 0 && result.error === undefined) {
    const last = result.stages?.at(-1)?.stage ?? 'start';
    result.error = signal === 'SIGKILL' ? `killed at the time budget after stage "${last}"` : `worker exited ${code ?? signal} after stage "${last}" (out of memory?)`;
  }
  return result;
}

const models = await import(join(root, 'packages/models/dist/index.js'));
/** What @agentflow/models' memory plan predicts for the step's process on this device (the log-probs and the training step), to set beside the measured peak. */
function plannedStepMiB(shape, plan) {
  const config = models.getModelPreset(shape);
  const tokens = plan.batch * (plan.prompt + plan.completion);
  const sessions = [
    { kind: 'inference', name: 'log-probs', rows: plan.batch, sequence: plan.prompt + plan.completion, scored: plan.completion },
    { kind: 'training', name: 'step', rows: plan.batch, tokens, completionTokens: plan.batch * plan.completion, recompute: plan.recompute },
  ];
  const planned = models.planMemory({
    device: args.device,
    availableBytes: 2 ** 50,
    models: [{ name: shape, config, loraRank: 8, trained: true, weightDtype: plan.dtype, sessions }],
  });
  return planned.totalBytes / 2 ** 20;
}
const fmt = (value, digits = 1) => (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits));
console.log(`\n# gpu:check on ${args.device} (${new Date().toISOString()})\n`);
const correctness = await runWorker('correctness');
report.correctness = correctness;
const rows = correctness.rows ?? [];
console.log('| check | output | max abs diff | relative to max abs (CPU) | result |\n|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.check} | ${row.output} | ${row.worst.toExponential(2)} | ${row.relative.toExponential(2)} | ${row.ok ? 'ok' : 'FAIL'} |`);
if (correctness.error) console.log(`| correctness | | | | ${correctness.error} |`);
if (correctness.peakMatmul) {
  const { n, tflops } = correctness.peakMatmul;
  console.log(`\nfloat32 MatMul ${n}x${n}x${n} through a session (host copies included): ${fmt(tflops, 2)} TFLOP/s`);
}

/** The plans of `table` for the shapes asked (`--shapes`); the CPU dry run's plans take each shape asked. */
function plansFor(table) {
  const shapes = args.shapes.split(',').filter(Boolean);
  return args.device === 'cuda'
    ? table.cuda.filter((plan) => shapes.includes(plan.shape))
    : shapes.flatMap((shape) => table.cpu.map((plan) => ({ ...plan, shape })));
}

report.steps = [];
for (const plan of plansFor(PLANS)) {
  const extra = [
    ...['--shape', plan.shape, '--dtype', plan.dtype, '--batch', String(plan.batch), '--prompt', String(plan.prompt)],
    ...['--completion', String(plan.completion), '--steps', args.steps, '--recompute', plan.recompute ? 'on' : 'off'],
  ];
  report.steps.push({ ...(await runWorker('step', extra)), plan, plannedMiB: plannedStepMiB(plan.shape, plan) });
}
console.log(
  '\nLoRA r=8 DAPO-style step (clipped surrogate, forward + backward to the LoRA inputs, attention in blocks of 256 rows), median of the timed steps.',
  `\nMFU = 4 x N x tokens / step time / peak, N = MatMul parameters (linear layers + LM head; LoRA and attention-score FLOPs not counted): forward 2N, backward to the activations 2N, no base weight gradients. Peaks: bf16 ${PEAK.bf16}, tf32 ${PEAK.tf32} TFLOP/s (H200 dense).\n`,
);
console.log(
  "Each step's process first opens the policy's inference session and scores the micro-batch; the trainer's graph then joins its weights (one session, one device copy: weightCopies). Log-prob drift: the same scoring after the join.\n",
);
console.log('| shape | weights | params | tokens (B x (P+C)) | session + first step s | step s | tokens/s | TFLOP/s | MFU bf16 | MFU tf32 | peak GPU MiB | peak RSS MiB | plan MiB | weight copies | log-prob drift | result |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const step of report.steps) {
  const tflops = step.stepS ? step.flopsPerStep / step.stepS / 1e12 : undefined;
  Object.assign(step, { tflops, mfuBf16: tflops && tflops / PEAK.bf16, mfuTf32: tflops && tflops / PEAK.tf32 });
  const gpu = step.gpuMemoryPeakMiB === undefined ? '-' : `${step.gpuMemoryPeakMiB} (idle ${step.gpuMemoryBaselineMiB})`;
  const cuda = args.device === 'cuda';
  console.log(
    `| ${step.plan.shape} | ${step.plan.dtype} | ${step.parameters >= 1e9 ? `${fmt(step.parameters / 1e9, 2)}B` : `${fmt(step.parameters / 1e6, 1)}M`} | ${step.plan.batch} x (${step.plan.prompt}+${step.plan.completion})${step.plan.recompute ? ', recomputed' : ''} | ${fmt(step.firstStepS)} | ${fmt(step.stepS, 3)} | ${fmt(step.tokensPerS, 0)} | ${fmt(tflops, 1)} | ${cuda ? `${fmt(step.mfuBf16 * 100)}%` : '-'} | ${cuda ? `${fmt(step.mfuTf32 * 100)}%` : '-'} | ${gpu} | ${fmt(step.peakRssMiB, 0)} | ${fmt(step.plannedMiB, 0)} | ${step.weightCopies ? step.weightCopies.map((copy) => `${copy.sessions.length} sessions, ${fmt(copy.gib, 2)} GiB`).join('; ') || 'none shared' : '-'} | ${step.logprobDriftAfterJoin ?? '-'} | ${step.error ?? `ok on ${step.resolvedDevice}`} |`,
  );
}

report.generation = [];
for (const plan of plansFor(GENERATION_PLANS)) {
  const extra = ['--shape', plan.shape, '--dtype', plan.dtype, '--rows', String(plan.rows), '--prompt', String(plan.prompt), '--new', String(plan.new), '--repeats', '2'];
  report.generation.push({ ...(await runWorker('generation', extra)), plan });
}
console.log('\nRollout generation (KV cache, temperature 1, every row to its last new token), median of 2 generations after a warm-up one.\n');
console.log('| shape | weights | rows x (prompt + new) | session + first generation s | generation s | tokens/s | peak GPU MiB | peak RSS MiB | result |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const run of report.generation) {
  const gpu = run.gpuMemoryPeakMiB === undefined ? '-' : `${run.gpuMemoryPeakMiB} (idle ${run.gpuMemoryBaselineMiB})`;
  console.log(
    `| ${run.plan.shape} | ${run.plan.dtype} | ${run.plan.rows} x (${run.plan.prompt}+${run.plan.new}) | ${fmt(run.firstGenerationS)} | ${fmt(run.generationS, 2)} | ${fmt(run.tokensPerS, 0)} | ${gpu} | ${fmt(run.peakRssMiB, 0)} | ${run.error ?? `ok on ${run.resolvedDevice}`} |`,
  );
}
rmSync(scratch, { recursive: true, force: true });
report.ran = true;
report.wallS = (performance.now() - started) / 1000;
console.log(`\ngpu:check took ${fmt(report.wallS)} s${args.out ? `; JSON in ${args.out}` : ''}.`);
const failed =
  rows.some((row) => !row.ok) ||
  correctness.error !== undefined ||
  report.steps.some((step) => step.error !== undefined) ||
  report.generation.some((run) => run.error !== undefined);
finish(failed ? EXIT.failed : EXIT.ok);
