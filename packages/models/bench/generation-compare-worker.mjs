// AgentFlow side of bench/generation-compare.mjs, one fresh process per run: loads the Hugging Face
// folder and PEFT adapter the benchmark wrote, with the base weights as --dtype (loadPolicyModel, as
// `policy.dtype` does), opens the policy the trainer rolls out with (createLocalPolicy, LoRA) and
// runs --warmup + --repeats generations of the same batch (policy.generate: the trainer's rollout
// path, a prefill and one KV-cached step per token).
// Usage: node bench/generation-compare-worker.mjs --dir D --dtype float32|float16 --repeats N --warmup W
//          --threads T --out result.json [--dist DIR] [--spinning on|off]
// --dist loads @agentflow/models from another build (a copy of dist/ made before a change), so a
// change to generation can be timed against the code before it in one run.
// Times are seconds since the process started (performance.now() counts from the time origin).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const started = performance.now();
const { createRuntime } = await import('@agentflow/tensor');
const models = await import(args.dist ? pathToFileURL(join(resolve(args.dist), 'index.js')).href : '../dist/index.js');
const imported = performance.now();
const seconds = (ms) => ms / 1000;
const threads = Number(args.threads ?? 2);
const repeats = Number(args.repeats ?? 3);
const warmup = Number(args.warmup ?? 1);

function vmHwmBytes() {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  return line ? Number(line.split(/\s+/)[1]) * 1024 : null;
}

const spec = JSON.parse(readFileSync(join(args.dir, 'prompts.json'), 'utf8'));
const model = await models.loadPolicyModel(join(args.dir, 'model'), { dtype: args.dtype ?? 'float32', device: 'cpu' });
const adapter = await models.loadLoraAdapter(join(args.dir, 'adapter'), model.config);
// --spinning off: ONNX Runtime's intra-op threads sleep while they wait (session.intra_op.allow_spinning 0).
const spinning = args.spinning === undefined ? {} : { intraOpSpinning: args.spinning !== 'off' };
const runtime = createRuntime({ device: 'cpu', intraOpThreads: threads, interOpThreads: 1, ...spinning });
const policy = await models.createLocalPolicy({ model, runtime, adapter, seed: 0 });
const loaded = performance.now();

const times = [];
const digests = [];
let firstDone;
let steps = 0;
for (let run = 0; run < warmup + repeats; run++) {
  // Seeds per row and run, so every build draws the same tokens in the same run.
  const requests = spec.promptIds.map((promptIds, row) => ({ promptIds, maxTokens: spec.maxTokens, temperature: spec.temperature, seed: 1000 * run + row }));
  const began = performance.now();
  const generations = await policy.generate(requests);
  times.push(seconds(performance.now() - began));
  firstDone ??= seconds(performance.now());
  steps = Math.max(...generations.map((generation) => generation.tokenIds.length));
  digests.push(
    createHash('sha256')
      .update(JSON.stringify(generations.map((generation) => [generation.tokenIds, generation.logprobs])))
      .digest('hex')
      .slice(0, 16),
  );
}
await policy.release();
writeFileSync(
  args.out,
  JSON.stringify({
    side: 'agentflow',
    dtype: args.dtype ?? 'float32',
    threads,
    import_s: seconds(imported - started),
    load_s: seconds(loaded - imported),
    first_done_s: firstDone,
    generations_s: times,
    // The batch runs until its longest row ends: rows x steps tokens go through the model.
    tokens: spec.promptIds.length * steps,
    digests,
    peak_rss_bytes: vmHwmBytes(),
  }),
);
