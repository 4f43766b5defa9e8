// Where AgentFlow's time goes in bench/pytorch-compare.mjs's workloads: runs the worker under
// `node --cpu-prof` (whole process: one step; steady state: --steps steps) and sums the main
// thread's samples by where they fall: ONNX Runtime (session creation and runs, native code called
// from its binding), graph building and serialisation (@agentflow/tensor's graph code, protobuf),
// weight loading, the models package's per-step JavaScript, garbage collection, idle.
// Usage: node bench/pytorch-compare-profile.mjs --dir D [--task lora|logprobs|full] [--steps 1] [--threads 2] [--top 25]
// (D: a folder that `pytorch-compare.mjs --keep` left behind.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
if (!args.dir) throw new Error('Pass --dir, a folder written by `node bench/pytorch-compare.mjs --keep`.');
const task = args.task ?? 'lora';
const top = Number(args.top ?? 25);
const profileDir = mkdtempSync(join(tmpdir(), 'agentflow-cpu-prof-'));
const out = join(profileDir, 'result.json');
const worker = [join(here, 'pytorch-compare-worker.mjs'), '--dir', args.dir, '--task', task, '--steps', args.steps ?? '1', '--threads', args.threads ?? '2', '--out', out];
const child = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', '500', ...worker], { encoding: 'utf8' });
if (child.status !== 0) throw new Error(`worker failed:\n${child.stderr}`);
const result = JSON.parse(readFileSync(out, 'utf8'));
const profile = JSON.parse(readFileSync(join(profileDir, readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))), 'utf8'));
rmSync(profileDir, { recursive: true, force: true });

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const id of node.children ?? []) parents.set(id, node.id);
const milliseconds = new Map(profile.nodes.map((node) => [node.id, 0]));
profile.samples.forEach((id, index) => {
  milliseconds.set(id, milliseconds.get(id) + (profile.timeDeltas[index + 1] ?? 0) / 1000);
});

/** The stack of a node, innermost first, as "function url" strings. */
function stack(id) {
  const frames = [];
  for (let current = id; current !== undefined; current = parents.get(current)) {
    const { functionName, url } = nodes.get(current).callFrame;
    frames.push(`${functionName || '(anonymous)'} ${url}:${nodes.get(current).callFrame.lineNumber + 1}`);
  }
  return frames;
}

// Buckets: the first that matches wins; `self` is tested on the sampled function ("name url:line"),
// `stack` on any frame of its stack.
const buckets = [
  ['ONNX Runtime: session creation (native)', { self: /^(OnnxruntimeSessionHandler|initOrt) / }],
  ['ONNX Runtime: runs (native)', { self: /^\(anonymous\) .*onnxruntime-node\/dist\/backend\.js/ }],
  ['ONNX Runtime: release', { self: /^dispose .*onnxruntime-node\/dist\/backend\.js/ }],
  ['transposed weight copies for the graph', { self: /^transpose2d / }],
  ['graph serialisation (protobuf)', { stack: /protobufjs|onnx-proto|^(toBytes|modelProto) / }],
  ['graph building and autodiff', { stack: /^(buildDecoder|buildPolicyTrainingGraph|buildInferenceGraph|buildGradients|gradients) / }],
  ['weight loading and checks', { stack: /^(loadModel|loadModelWeights|loadLoraAdapter|checkFinite|readMany|read) / }],
  ['per-step JS (packing, feeds, outputs)', { stack: /^(packScoringBatch|unpackCompletionValues|loraFeeds|packRows|toOrtTensor|fromOrtTensor|finiteRows) / }],
  ['module loading (imports)', { stack: /node:internal\/modules|node:internal\/deps\/cjs-module-lexer|^dlopen / }],
];
const matches = (test, frames) => (test.self ? test.self.test(frames[0]) : frames.some((frame) => test.stack.test(frame)));
const totals = new Map();
const selfByFunction = new Map();
for (const [id, ms] of milliseconds) {
  if (ms === 0) continue;
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const frames = stack(id);
  let bucket = ['(idle)', '(garbage collector)', '(program)'].includes(functionName) ? functionName : undefined;
  for (const [name, test] of buckets) {
    if (bucket) break;
    if (matches(test, frames)) bucket = name;
  }
  bucket ??= 'other JS';
  totals.set(bucket, (totals.get(bucket) ?? 0) + ms);
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|packages)\//, '')}:${lineNumber + 1}`;
  selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + ms);
}
const sum = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(`## AgentFlow ${task}, ${args.steps ?? 1} step(s), main-thread CPU profile (${(sum / 1000).toFixed(2)} s sampled)`);
console.log(`worker phases: imports ${result.import_s.toFixed(2)} s, weights ${result.load_s.toFixed(2)} s, session ${result.session_s.toFixed(2)} s, steps ${result.steps_s.map((v) => v.toFixed(2)).join(', ')} s`);
console.log('| where | seconds | share |\n| --- | ---: | ---: |');
for (const [bucket, ms] of [...totals].sort((a, b) => b[1] - a[1])) console.log(`| ${bucket} | ${(ms / 1000).toFixed(2)} | ${((100 * ms) / sum).toFixed(0)}% |`);
console.log(`\ntop ${top} functions by self time:`);
for (const [key, ms] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${(ms / 1000).toFixed(3)} s  ${key}`);
