// AgentFlow against PyTorch eager on the same small Qwen3, in one run (issue #19).
// Writes random weights once (a Hugging Face folder: config.json + model.safetensors, and a PEFT
// adapter), then runs each side as fresh processes, alternately, on three workloads:
//   lora      one LoRA forward+backward of the mean completion NLL (gradients of the LoRA matrices only)
//   logprobs  completion log-probs of the same batch, base model, no gradients
//   full      one full-parameter training step: forward, backward with the gradient of every weight
//             (the tied head's in the embedding's) and one AdamW update of every weight (decoupled
//             weight decay on matrices, none on norms and biases; the same lr, betas and epsilon on
//             both sides: AgentFlow's createLocalPolicy with trainable full, PyTorch's torch.optim.AdamW
//             with two parameter groups)
// Each is measured whole-process (wall time of a process that imports, loads the weights, builds
// and runs one step) and steady-state (median step after warm-up steps in one process), with the
// peak RSS (VmHWM) of each process. The first steady-state run of each side also dumps its outputs:
// log-probs and LoRA gradients are compared, so both sides compute the same thing. For full, a
// separate untimed process of each side dumps the loss, every weight's gradient and every weight
// after one AdamW step (the dumps would otherwise weigh on the measured processes).
// PyTorch is Debian's python3-torch under /usr/bin/python3; without it the PyTorch side is skipped.
// Usage: node bench/pytorch-compare.mjs [--rounds 3] [--steps 4] [--warmup 2] [--threads 2]
//          [--vocab 4096] [--batch 4] [--prompt 128] [--completion 128] [--python /usr/bin/python3]
//          [--only lora,logprobs,full] [--lr 1e-5] [--weight-decay 0.01] [--blas DIR]
//          [--memory-pattern on|off] [--blas-core auto|detected|NAME] [--keep]
// PyTorch's BLAS: the OpenMP OpenBLAS (`apt-get install -y libopenblas0-openmp`) when installed, else
// the system's libblas.so.3 (or --blas DIR, put first on LD_LIBRARY_PATH); its kernels the best this
// CPU allows (--blas-core, torch-side.mjs); the library and kernels loaded are printed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSafetensors } from '@agentflow/tensor';
import { createLoraAdapter, createRandomModel, saveLoraAdapter, saveModelFolder } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';
import { torchSide } from './torch-side.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
const number = (name, fallback) => Number(args[name] ?? fallback);
const rounds = number('rounds', 3);
const steps = number('steps', 4);
const warmup = number('warmup', 2);
const threads = number('threads', 2);
const python = args.python ?? '/usr/bin/python3';
const tasks = (args.only ?? 'lora,logprobs,full').split(',');
// The full step's AdamW: betas and epsilon are AgentFlow's defaults (createAdamW), given to PyTorch as they are.
const adamw = { learningRate: number('lr', 1e-5), beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: number('weight-decay', 0.01) };
const shape = { batch: number('batch', 4), prompt: number('prompt', 128), completion: number('completion', 128) };

const config = { ...BENCH_SHAPES['25m'], vocabSize: number('vocab', 4096) };

/** A deterministic stream in [0, 1). */
function randomStream(seed) {
  let state = seed;
  return () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
}

async function writeInputs(dir) {
  const model = createRandomModel(config, 7);
  await saveModelFolder(join(dir, 'model'), model, { tokenizer: null });
  // B random instead of PEFT's zeros, so the adapter changes the forward pass and A has gradients.
  const adapter = createLoraAdapter(config, { rank: 8, alpha: 16 }, 3);
  const random = randomStream(11);
  for (const matrices of adapter.matrices.values()) {
    for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = (2 * random() - 1) * 0.02;
  }
  await saveLoraAdapter(join(dir, 'adapter'), adapter);
  const ids = (length) => Array.from({ length }, () => Math.floor(random() * config.vocabSize));
  const promptIds = Array.from({ length: shape.batch }, () => ids(shape.prompt));
  const completionIds = Array.from({ length: shape.batch }, () => ids(shape.completion));
  const weight = 1 / (shape.batch * shape.completion);
  const tokenWeights = completionIds.map((row) => row.map(() => weight));
  writeFileSync(join(dir, 'batch.json'), JSON.stringify({ promptIds, completionIds, tokenWeights, adamw }));
  return [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
}

// PyTorch's threads, BLAS and BLAS kernels (torch-side.mjs; --blas-core auto|detected|NAME).
const torch = torchSide({ python, threads, blasDir: args.blas, blasCore: args['blas-core'] ?? 'auto' });
const environment = torch.environment;

/** One fresh process of one side; wall time measured here, from spawn to exit. */
function runSide(side, task, stepCount, dir, dump) {
  const out = join(dir, `result-${side}-${task}.json`);
  const common = ['--dir', dir, '--task', task, '--steps', String(stepCount), '--threads', String(threads), '--out', out, ...(dump ? ['--dump', dump] : [])];
  const agentflowOnly = args['memory-pattern'] ? ['--memory-pattern', args['memory-pattern']] : [];
  const command = side === 'agentflow' ? [process.execPath, [join(here, 'pytorch-compare-worker.mjs'), ...common, ...agentflowOnly]] : [python, [join(here, 'pytorch_qwen3.py'), ...common]];
  const began = performance.now();
  const child = spawnSync(command[0], command[1], { encoding: 'utf8', env: environment, maxBuffer: 1 << 26 });
  const wall = (performance.now() - began) / 1000;
  if (child.status !== 0) throw new Error(`${side} ${task} failed (exit ${child.status}):\n${child.stdout}\n${child.stderr}`);
  return { ...JSON.parse(readFileSync(out, 'utf8')), wall_s: wall };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Max abs difference of log-probs and loss; relative error ||g1 - g2|| / ||g2|| over all LoRA gradients. */
async function compareOutputs(agentflowPath, pytorchPath) {
  const [a, p] = await Promise.all([readSafetensors(agentflowPath), readSafetensors(pytorchPath)]);
  const result = {};
  let difference = 0;
  let norm = 0;
  for (const [name, theirs] of Object.entries(p.tensors)) {
    const ours = a.tensors[name];
    if (!ours) continue; // the lora task dumps the loss and gradients, logprobs the log-probs
    let maxAbs = 0;
    for (let index = 0; index < theirs.data.length; index++) {
      const delta = ours.data[index] - theirs.data[index];
      maxAbs = Math.max(maxAbs, Math.abs(delta));
      difference += delta * delta;
      norm += theirs.data[index] * theirs.data[index];
    }
    if (name === 'logprobs') result.logprobsMaxAbs = maxAbs;
    if (name === 'loss') result.loss = [ours.data[0], theirs.data[0]];
    if (!name.startsWith('grad.')) difference = norm = 0;
  }
  if (norm > 0) result.gradientRelativeError = Math.sqrt(difference / norm);
  return result;
}

/**
 * ||a - b|| and ||b|| over the tensors of two dumps whose names start with `prefix`, max |a - b|,
 * the values that differ by more than `far`, and with `baseline`, ||b - baseline||.
 */
function differenceOver(ours, theirs, prefix, baseline, far = Number.POSITIVE_INFINITY) {
  let difference = 0;
  let norm = 0;
  let step = 0;
  let maxAbs = 0;
  let farCount = 0;
  let count = 0;
  for (const [name, tensor] of Object.entries(theirs)) {
    if (!name.startsWith(prefix)) continue;
    const mine = ours[name]?.data;
    if (!mine) throw new Error(`AgentFlow's dump lacks ${name}`);
    const start = baseline?.[name.slice(prefix.length)]?.data;
    count += tensor.data.length;
    for (let index = 0; index < tensor.data.length; index++) {
      const delta = mine[index] - tensor.data[index];
      difference += delta * delta;
      norm += tensor.data[index] * tensor.data[index];
      maxAbs = Math.max(maxAbs, Math.abs(delta));
      if (Math.abs(delta) > far) farCount++;
      if (start) step += (tensor.data[index] - start[index]) ** 2;
    }
  }
  return { difference: Math.sqrt(difference), norm: Math.sqrt(norm), step: Math.sqrt(step), maxAbs, farCount, count };
}

/** The full step's check: loss, every weight's gradient, and every weight after one AdamW step (and the step itself, from the weights written). */
async function compareFullStep(agentflowPath, pytorchPath) {
  const [a, p, start] = await Promise.all([readSafetensors(agentflowPath), readSafetensors(pytorchPath), readSafetensors(join(dir, 'model', 'model.safetensors'))]);
  const gradients = differenceOver(a.tensors, p.tensors, 'grad.');
  // AdamW's first step is lr g / (|g| + eps): a weight whose gradient is within a few eps of zero moves by
  // what its gradient's last digits say, so its step may differ by a fair part of lr between the sides.
  const parameters = differenceOver(a.tensors, p.tensors, 'param.', start.tensors, adamw.learningRate / 100);
  return {
    loss: [a.tensors.loss.data[0], p.tensors.loss.data[0]],
    gradientRelativeError: gradients.difference / gradients.norm,
    gradientCount: Object.keys(p.tensors).filter((name) => name.startsWith('grad.')).length,
    parameterRelativeError: parameters.difference / parameters.norm,
    updateRelativeError: parameters.difference / parameters.step,
    parameterMaxAbs: parameters.maxAbs,
    farSteps: [parameters.farCount, parameters.count],
  };
}

/** The checkout's commit, and whether the sources the dist/ builds come from differ from it. */
function checkoutState() {
  const git = (...command) => spawnSync('git', command, { cwd: here, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'not a git checkout';
  const dirty = git('status', '--porcelain', '--', '../src', '../../tensor/src').stdout.trim();
  return `commit ${head.stdout.trim()}${dirty ? ' with uncommitted changes in models/tensor src' : ''}`;
}

const dir = mkdtempSync(join(tmpdir(), 'agentflow-pytorch-compare-'));
console.log(`# AgentFlow vs PyTorch eager (issues #19, #29), ${new Date().toISOString().slice(0, 10)}`);
if (!torch.ok) console.log(`PyTorch side skipped: ${torch.reason}. Only AgentFlow's figures are printed.`);
const parameters = await writeInputs(dir);
const embedding = config.vocabSize * config.hiddenSize;
console.log(
  `model: Qwen3, hidden ${config.hiddenSize}, ${config.numHiddenLayers} layers, ${config.numAttentionHeads} heads / ${config.numKeyValueHeads} kv heads, head_dim ${config.headDim}, intermediate ${config.intermediateSize}, vocab ${config.vocabSize}, tied head: ${(parameters / 1e6).toFixed(2)}M parameters (${((parameters - embedding) / 1e6).toFixed(2)}M without the embedding), float32, random weights in ${dir}`,
);
console.log(`batch ${shape.batch} x ${shape.prompt + shape.completion} tokens (prompt ${shape.prompt}, completion ${shape.completion}); LoRA rank 8, alpha 16, all seven linear modules`);
if (tasks.includes('full')) {
  console.log(
    `full step: every weight trained (${(parameters / 1e6).toFixed(2)}M); AdamW lr ${adamw.learningRate}, betas (${adamw.beta1}, ${adamw.beta2}), eps ${adamw.epsilon}, weight decay ${adamw.weightDecay} on matrices, none on norms; no clipping; PyTorch: zero_grad(set_to_none=True), torch.optim.AdamW, two parameter groups, foreach as the installed version defaults`,
  );
}
console.log(`threads: ${threads} on both sides (ONNX Runtime intra-op ${threads}, inter-op 1; torch.set_num_threads(${threads}), OMP/OpenBLAS ${threads}); machine ${cpus().length} cores (${cpus()[0]?.model})`);
console.log(`AgentFlow at ${checkoutState()} (dist/ as built); PyTorch ${torch.ok ? torch.version : 'absent'} under ${python}; Node ${process.version}; AgentFlow memoryPattern ${args['memory-pattern'] ?? 'as the runtime defaults'}; ${rounds} rounds, sides alternating; steady state = median of ${steps} steps after ${warmup} warm-up steps\n`);

const sides = torch.ok ? ['agentflow', 'pytorch'] : ['agentflow'];
const results = {};
const checks = {};
const loads = [];
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
let blas;
for (let round = 0; round < rounds; round++) {
  loads.push(loadAverage());
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const task of tasks) {
    for (const side of order) {
      const whole = runSide(side, task, 1, dir);
      const dump = round === 0 ? join(dir, `dump-${side}-${task}.safetensors`) : undefined;
      // full: the dump (gradients and weights of a 27M-parameter model) runs in an untimed process of its own.
      if (dump && task === 'full') runSide(side, task, 1, dir, dump);
      const steady = runSide(side, task, warmup + steps, dir, task === 'full' ? undefined : dump);
      blas ??= steady.blas;
      results[`${task}/${side}`] ??= { whole: [], steady: [], wholeRss: [], steadyRss: [], first: [], load: [], import: [] };
      const entry = results[`${task}/${side}`];
      entry.whole.push(whole.wall_s);
      entry.wholeRss.push(whole.peak_rss_bytes);
      entry.first.push(whole.steps_s[0] + (whole.session_s ?? 0));
      entry.load.push(whole.load_s);
      entry.import.push(whole.import_s);
      entry.steady.push(median(steady.steps_s.slice(warmup)));
      entry.steadyRss.push(steady.peak_rss_bytes);
      console.error(`round ${round + 1} ${task} ${side}: whole ${whole.wall_s.toFixed(2)} s, steady ${(median(steady.steps_s.slice(warmup)) * 1000).toFixed(0)} ms`);
    }
    if (round === 0 && torch.ok) {
      const compare = task === 'full' ? compareFullStep : compareOutputs;
      checks[task] = await compare(join(dir, `dump-agentflow-${task}.safetensors`), join(dir, `dump-pytorch-${task}.safetensors`));
    }
  }
}

const mb = (bytes) => `${Math.round(bytes / 1e6)} MB`;
const ms = (value) => `${(value * 1000).toFixed(0)} ms`;
const s = (value) => `${value.toFixed(2)} s`;
const rows = [
  ['steady-state step (median)', 'steady', ms],
  ['whole process: wall time', 'whole', s],
  ['  of which: imports', 'import', s],
  ['  of which: loading weights', 'load', s],
  ['  of which: session + first step', 'first', s],
  ['whole process: peak RSS', 'wholeRss', mb],
  ['steady-state process: peak RSS', 'steadyRss', mb],
];
const names = { lora: 'LoRA forward+backward', logprobs: 'log-probs (no grad)', full: 'full step (fwd+bwd+AdamW)' };
console.log('| workload | measure | AgentFlow | PyTorch | AgentFlow / PyTorch |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const task of tasks) {
  for (const [label, key, format] of rows) {
    const a = median(results[`${task}/agentflow`][key]);
    const p = torch.ok ? median(results[`${task}/pytorch`][key]) : undefined;
    console.log(`| ${names[task]} | ${label} | ${format(a)} | ${p === undefined ? 'skipped' : format(p)} | ${p === undefined ? '' : `${(a / p).toFixed(2)}x`} |`);
  }
}
console.log(`\nmedians over rounds; 1-minute load average at the start of each round: ${loads.join(', ')}, at the end: ${loadAverage()} (${cpus().length} cores)`);
if (torch.ok) console.log(`PyTorch's BLAS: ${blas ?? 'none mapped'}${blas?.includes('/blas/libblas') ? ' (reference BLAS: install libopenblas0-openmp)' : ''}, ${torch.description}`);
console.log('per-round values:');
for (const [key, entry] of Object.entries(results)) {
  console.log(`  ${key}: whole ${entry.whole.map((v) => v.toFixed(2)).join(', ')} s; steady ${entry.steady.map((v) => (v * 1000).toFixed(0)).join(', ')} ms`);
}
for (const [task, check] of Object.entries(checks)) {
  const parts = [];
  if (check.logprobsMaxAbs !== undefined) parts.push(`max |log-prob difference| ${check.logprobsMaxAbs.toExponential(2)}`);
  if (check.loss) parts.push(`loss ${check.loss[0].toFixed(6)} (AgentFlow) vs ${check.loss[1].toFixed(6)} (PyTorch)`);
  if (check.gradientCount !== undefined) parts.push(`gradients of all ${check.gradientCount} weights: relative error ${check.gradientRelativeError.toExponential(2)}`);
  else if (check.gradientRelativeError !== undefined) parts.push(`LoRA gradients: relative error ${check.gradientRelativeError.toExponential(2)}`);
  if (check.parameterRelativeError !== undefined) {
    parts.push(
      `weights after one AdamW step: relative error ${check.parameterRelativeError.toExponential(2)} (max |difference| ${check.parameterMaxAbs.toExponential(2)}); the step itself (new - starting weights): relative error ${check.updateRelativeError.toExponential(2)}, ${check.farSteps[0]} of ${check.farSteps[1]} weights' steps differ by more than lr/100 (gradients within a few eps of zero)`,
    );
  }
  console.log(`check ${task}: ${parts.join('; ')}`);
}
if (args.keep === undefined) rmSync(dir, { recursive: true, force: true });
else console.log(`inputs and dumps kept in ${dir}`);
