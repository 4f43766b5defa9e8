// AgentFlow's rollout generation against PyTorch eager with a KV cache, in one run (issue #32).
// For each shape, writes random weights once (a Hugging Face folder, float32, and a PEFT adapter of
// the trainer's LoRA shape with B = 0 as PEFT starts it), then runs each side as a fresh process:
//   pytorch            bench/pytorch_generate.py: pytorch_qwen3.py's decoder with a torch.cat KV cache
//                      (as transformers' DynamicCache grows), torch.multinomial over softmax(logits / T)
//   agentflow float32  createLocalPolicy(...).generate, the trainer's rollout path, float32 base weights
//   agentflow float16  the same with float16 base weights (loadPolicyModel, policy.dtype float16)
//   agentflow before   with --before DIR: float32 again from another build of @agentflow/models (a copy
//                      of dist/ taken before a change), to time a change in the same run; the sampled
//                      tokens and log-probs of both builds are compared by digest
// Every side samples 16 rows x 128 new tokens (--rows, --new) after 256-token prompts (--prompt) at
// temperature 1, the head on the last position only, with the same number of threads.
// whole process: rows x new / (process start to the end of its first generation: import, weights,
//                session, prefill and decode); steady state: rows x new / the median generation
//                after --warmup warm-up generations in that process.
// Shapes: 25m (bench/pytorch-compare.mjs's, see bench-shapes.mjs) and 0.6b (Qwen3-0.6B's config).
// Usage: node bench/generation-compare.mjs [--shapes 25m,0.6b] [--repeats 3] [--warmup 1] [--threads 2]
//          [--rows 16] [--prompt 256] [--new 128] [--before DIR] [--python /usr/bin/python3]
//          [--omp-wait-policy PASSIVE|ACTIVE] [--blas-core auto|detected|NAME] [--keep]
// Both sides wait the same way: OMP_WAIT_POLICY PASSIVE (the default) for PyTorch's OpenMP threads and
// ONNX Runtime's intra-op spinning off for ours (ACTIVE: both spin).
// Needs the built package (pnpm --filter @agentflow/models build) and Debian's python3-torch.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from '@agentflow/core';
import { createLoraAdapter, createRandomModel, saveLoraAdapter, saveModelFolder } from '../dist/index.js';
import { BENCH_SHAPES } from './bench-shapes.mjs';
import { torchSide } from './torch-side.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
const number = (name, fallback) => Number(args[name] ?? fallback);
const shapes = (args.shapes ?? '25m,0.6b').split(',');
const repeats = number('repeats', 3);
const warmup = number('warmup', 1);
const threads = number('threads', 2);
const sizes = { rows: number('rows', 16), prompt: number('prompt', 256), new: number('new', 128) };
const python = args.python ?? '/usr/bin/python3';
// configs/default.yaml's policy.lora: the adapter the trainer's rollouts feed.
const lora = { rank: 16, alpha: 32 };

// PyTorch's threads, BLAS and BLAS kernels as in bench/pytorch-compare.mjs (torch-side.mjs).
const torchFound = torchSide({
  python,
  threads,
  blasCore: args['blas-core'] ?? 'auto',
  // OpenMP's threads sleep at barriers instead of spinning: on this shared 2-core machine, spinning
  // threads descheduled by other processes made PyTorch's generation about 5x slower (measured
  // 2026-12-03: 4.9 s against 1.0 s for 4 x 16 tokens at 25m). PyTorch gets its faster setting.
  extra: { OMP_WAIT_POLICY: args['omp-wait-policy'] ?? 'PASSIVE' },
});
const environment = torchFound.environment;

// ONNX Runtime's intra-op threads wait as PyTorch's OpenMP ones do.
const ortSpinning = environment.OMP_WAIT_POLICY.toUpperCase() === 'ACTIVE' ? 'on' : 'off';

async function writeInputs(dir, config) {
  const model = createRandomModel(config, 7);
  await saveModelFolder(join(dir, 'model'), model, { tokenizer: null });
  const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  model.weights.clear();
  await saveLoraAdapter(join(dir, 'adapter'), createLoraAdapter(config, lora, 3));
  const random = createRandom(11);
  const promptIds = Array.from({ length: sizes.rows }, () => Array.from({ length: sizes.prompt }, () => 2 + Math.floor(random.next() * (config.vocabSize - 2))));
  writeFileSync(join(dir, 'prompts.json'), JSON.stringify({ promptIds, maxTokens: sizes.new, temperature: 1 }));
  return parameters;
}

function runSide(side, dir) {
  const out = join(dir, `result-${side.name.replace(/\W+/g, '-')}.json`);
  const common = ['--dir', dir, '--repeats', String(repeats), '--warmup', String(warmup), '--threads', String(threads), '--out', out];
  const command =
    side.kind === 'pytorch'
      ? [python, [join(here, 'pytorch_generate.py'), ...common]]
      : [process.execPath, [join(here, 'generation-compare-worker.mjs'), ...common, '--spinning', ortSpinning, '--dtype', side.dtype, ...(side.dist ? ['--dist', side.dist] : [])]];
  const child = spawnSync(command[0], command[1], { encoding: 'utf8', env: environment, maxBuffer: 1 << 26 });
  if (child.status !== 0) throw new Error(`${side.name} failed (exit ${child.status}):\n${child.stdout}\n${child.stderr}`);
  return JSON.parse(readFileSync(out, 'utf8'));
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').trim().split(' ').slice(0, 3).join(' ');

const torch = torchFound.ok ? torchFound.version : undefined;
console.log(`# Generation against PyTorch eager (KV cache), ${new Date().toISOString().slice(0, 10)}`);
console.log(
  `${sizes.rows} rows, ${sizes.prompt}-token prompts, ${sizes.new} new tokens each, temperature 1; LoRA rank ${lora.rank} (B = 0) on both sides; ${threads} threads on both sides (ONNX Runtime intra-op ${threads}, inter-op 1; torch.set_num_threads(${threads}), OMP_WAIT_POLICY ${environment.OMP_WAIT_POLICY}; ONNX Runtime intra-op spinning ${ortSpinning}); machine ${cpus().length} cores (${cpus()[0]?.model}); PyTorch ${torch ? `${torch} (${torchFound.description})` : 'absent (skipped)'} under ${python}; Node ${process.version}`,
);
console.log(`whole process = rows x new / (process start to the end of its first generation); steady state = rows x new / median of ${repeats} generations after ${warmup} warm-up; load average at start: ${loadAverage()}\n`);

const sides = [
  ...(torch ? [{ name: 'PyTorch eager', kind: 'pytorch' }] : []),
  ...(args.before ? [{ name: 'AgentFlow before', kind: 'agentflow', dtype: 'float32', dist: args.before }] : []),
  { name: 'AgentFlow', kind: 'agentflow', dtype: 'float32' },
  { name: 'AgentFlow f16 weights', kind: 'agentflow', dtype: 'float16' },
];
const table = [];
const notes = [];
for (const name of shapes) {
  const config = BENCH_SHAPES[name];
  if (!config) throw new Error(`Unknown shape ${name}; known: ${Object.keys(BENCH_SHAPES).join(', ')}`);
  const dir = mkdtempSync(join(tmpdir(), `agentflow-generation-${name}-`));
  try {
    const parameters = await writeInputs(dir, config);
    notes.push(
      `${name}: hidden ${config.hiddenSize}, ${config.numHiddenLayers} layers, ${config.numAttentionHeads}/${config.numKeyValueHeads} heads, head_dim ${config.headDim}, intermediate ${config.intermediateSize}, vocab ${config.vocabSize}, tied: ${(parameters / 1e6).toFixed(1)}M parameters`,
    );
    const results = {};
    for (const side of sides) {
      const result = runSide(side, dir);
      const steady = median(result.generations_s.slice(warmup));
      results[side.name] = { ...result, steady, steadyRate: result.tokens / steady, wholeRate: result.tokens / result.first_done_s };
      // As each side ends, so that a run stopped early still says what it measured.
      console.error(`${name} ${side.name}: generations ${result.generations_s.map((time) => time.toFixed(2)).join(', ')} s; first done ${result.first_done_s.toFixed(2)} s after start`);
    }
    const baseline = results['PyTorch eager'];
    for (const side of sides) {
      const result = results[side.name];
      const ratio = (rate, of) => (baseline ? `${(rate / of).toFixed(2)}x` : 'n/a');
      table.push(
        `| ${name} | ${side.name} | ${side.kind === 'pytorch' ? 'float32' : side.dtype} | ${result.wholeRate.toFixed(1)} | ${result.steadyRate.toFixed(1)} | ${(result.steady * 1000).toFixed(0)} | ${ratio(result.wholeRate, baseline?.wholeRate)} | ${ratio(result.steadyRate, baseline?.steadyRate)} | ${(result.peak_rss_bytes / 2 ** 20).toFixed(0)} |`,
      );
    }
    const before = results['AgentFlow before'];
    if (before) {
      const same = before.digests.every((digest, index) => digest === results.AgentFlow.digests[index]);
      notes.push(`${name}: tokens and log-probs of every generation ${same ? 'identical' : 'DIFFERENT'} between --before and this build (sha256 ${results.AgentFlow.digests.join(', ')})`);
    }
  } finally {
    if (args.keep === 'true') console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
console.log(notes.join('\n'));
console.log('\n| shape | side | weights | whole process tok/s | steady tok/s | steady generation ms | ours/PyTorch whole | ours/PyTorch steady | peak RSS MiB |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
console.log(table.join('\n'));
console.log(`\nload average at end: ${loadAverage()}`);
