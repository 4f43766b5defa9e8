// AgentFlow side of bench/pytorch-compare.mjs, one fresh process per run: loads the Hugging Face
// folder and PEFT adapter that the benchmark wrote, opens the session through the public API and
// runs `--steps` steps of one task (the same tasks as pytorch_qwen3.py).
// Usage: node bench/pytorch-compare-worker.mjs --dir D --task lora|logprobs --steps N --threads T
//          --out result.json [--dump outputs.safetensors] [--memory-pattern on|off]
// Times are seconds since the process started (performance.now() counts from the time origin).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const started = performance.now();
const { createRuntime, writeSafetensors } = await import('@agentflow/tensor');
const { createCausalLm, createPolicyTrainer, loadLoraAdapter, loadModel, loraLayoutOf, nllObjective } = await import('../dist/index.js');
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
if (args.task === 'lora') {
  adapter = await loadLoraAdapter(join(args.dir, 'adapter'), model.config);
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(model.config, adapter.config), runtime, objectives: [nllObjective] });
  const batch = { ...spec, objective: { kind: 'nll' } };
  runStep = () => trainer.run(batch, adapter);
  release = () => trainer.release();
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
}

if (args.dump) {
  const rows = args.task === 'lora' ? undefined : result.logprobs;
  const tensors = {};
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
    session_s: args.task === 'lora' ? 0 : seconds(ready - loaded),
    steps_s: stepTimes,
    total_s: seconds(performance.now()),
    peak_rss_bytes: vmHwmBytes(),
    parameters,
  }),
);
