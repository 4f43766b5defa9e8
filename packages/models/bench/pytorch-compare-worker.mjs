// AgentFlow side of bench/pytorch-compare.mjs, one fresh process per run: loads the Hugging Face
// folder and PEFT adapter that the benchmark wrote, opens the session through the public API and
// runs `--steps` steps of one task (the same tasks as pytorch_qwen3.py). `full` is one step of a
// full-parameter policy (createLocalPolicy, trainable: full): accumulateGradients (forward and the
// gradient of every weight) and applyGradients (AdamW over every weight, in place).
// Usage: node bench/pytorch-compare-worker.mjs --dir D --task lora|logprobs|full --steps N --threads T
//          --out result.json [--dump outputs.safetensors] [--memory-pattern on|off]
// --dump writes the first step's outputs; with full, the gradients come from a training session of
// their own run before the policy's first step (the policy keeps its gradients to itself), and the
// weights after the update as param.<name>.
// Times are seconds since the process started (performance.now() counts from the time origin).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const started = performance.now();
const { createRuntime, writeSafetensors } = await import('@agentflow/tensor');
const { createCausalLm, createLocalPolicy, createPolicyTrainer, loadLoraAdapter, loadModel, loraLayoutOf, nllObjective } = await import('../dist/index.js');
const imported = performance.now();

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const steps = Number(args.steps ?? 1);
const threads = Number(args.threads ?? 2);
const seconds = (ms) => ms / 1000;

function vmHwmBytes() {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  return line ? Number(line.split(/\s+/)[1]) * 1024 : null;
}

const model = await loadModel(join(args.dir, 'model'));
const spec = JSON.parse(readFileSync(join(args.dir, 'batch.json'), 'utf8'));
// --memory-pattern off: ONNX Runtime's memory-pattern planning off (runtime setting memoryPattern).
const memoryPattern = args['memory-pattern'] === undefined ? {} : { memoryPattern: args['memory-pattern'] !== 'off' };
const runtime = createRuntime({ device: 'cpu', intraOpThreads: threads, interOpThreads: 1, ...memoryPattern });
const loaded = performance.now();

let adapter;
let runStep;
let release;
const tensors = {};
if (args.task === 'lora') {
  adapter = await loadLoraAdapter(join(args.dir, 'adapter'), model.config);
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(model.config, adapter.config), runtime, objectives: [nllObjective] });
  const batch = { ...spec, objective: { kind: 'nll' } };
  runStep = () => trainer.run(batch, adapter);
  release = () => trainer.release();
} else if (args.task === 'full') {
  const batch = { ...spec, objective: { kind: 'nll' } };
  if (args.dump) {
    // The gradients the policy's first step accumulates, from a session of their own.
    const trainer = createPolicyTrainer({ model, weights: [...model.weights.keys()], runtime, objectives: [nllObjective] });
    const { gradients } = await trainer.run(batch);
    for (const [name, gradient] of gradients) tensors[`grad.${name}`] = { dtype: 'float32', shape: model.weights.get(name).shape, data: gradient };
    await trainer.release();
  }
  // betas and epsilon are AdamW's defaults (0.9, 0.999, 1e-8), which batch.json's adamw states for PyTorch.
  const { learningRate, weightDecay } = spec.adamw;
  const policy = await createLocalPolicy({ model, runtime, trainable: { kind: 'full' }, weightDecay });
  runStep = async () => {
    const stats = await policy.accumulateGradients(batch);
    await policy.applyGradients({ learningRate });
    return { stats };
  };
  release = () => policy.release();
} else {
  const lm = await createCausalLm({ model, runtime });
  runStep = () => lm.logprobs(spec);
  release = () => lm.release();
}
const ready = performance.now();

const stepTimes = [];
let result;
for (let step = 0; step < steps; step++) {
  const began = performance.now();
  result = await runStep();
  stepTimes.push(seconds(performance.now() - began));
  if (args.dump && step === 0 && args.task === 'full') {
    tensors.loss = { dtype: 'float32', shape: [1], data: Float32Array.of(result.stats.loss) };
    for (const [name, tensor] of model.weights) tensors[`param.${name}`] = { dtype: 'float32', shape: tensor.shape, data: tensor.data.slice() };
  }
}

if (args.dump) {
  const rows = args.task === 'logprobs' ? result.logprobs : undefined;
  if (rows) tensors.logprobs = { dtype: 'float32', shape: [rows.length, rows[0].length], data: Float32Array.from(rows.flat()) };
  if (args.task === 'lora') {
    tensors.loss = { dtype: 'float32', shape: [1], data: Float32Array.of(result.stats.loss) };
    for (const [name, gradient] of result.gradients) {
      const [path, matrix] = [name.slice('lora.'.length, -2), name.slice(-1)];
      const m = adapter.matrices.get(path);
      tensors[`grad.${name}`] = { dtype: 'float32', shape: matrix === 'A' ? [adapter.config.rank, m.inFeatures] : [m.outFeatures, adapter.config.rank], data: gradient };
    }
  }
  await writeSafetensors(args.dump, tensors);
}
await release();
const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
writeFileSync(
  args.out,
  JSON.stringify({
    side: 'agentflow',
    task: args.task,
    version: JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version,
    threads,
    import_s: seconds(imported - started),
    load_s: seconds(loaded - imported),
    // lora and full open their training session on the first step (full's policy opens its inference session before).
    session_s: args.task === 'lora' ? 0 : seconds(ready - loaded),
    steps_s: stepTimes,
    total_s: seconds(performance.now()),
    peak_rss_bytes: vmHwmBytes(),
    parameters,
  }),
);
