// Throughput of the Qwen3 graph on the CPU: log-probs, one LoRA training step (nll) and KV-cached
// generation, for the tiny preset and a random model shaped like Qwen3-0.6B. Baselines measured in
// the same run: generation without the KV cache, and (tiny only) the float64 JS reference forward.
// Usage: node bench/models-bench.mjs [--presets tiny,qwen3-0.6b-shape] [--device cpu]
import { createRuntime } from '@agentflow/tensor';
import {
  createCausalLm,
  createLoraAdapter,
  createPolicyTrainer,
  createRandomModel,
  generate,
  getModelPreset,
  loraLayoutOf,
  nllObjective,
  referenceForward,
} from '../dist/index.js';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const presets = (args.presets ?? 'tiny,qwen3-0.6b-shape').split(',');
const device = args.device ?? 'cpu';
const peakMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const now = () => performance.now();

/** Shapes of the runs, per preset: the 0.6B run is kept to a few hundred tokens. */
const plans = {
  tiny: { batch: 8, prompt: 48, completion: 16, generateTokens: 32, repeats: 5 },
  'qwen3-0.6b-shape': { batch: 2, prompt: 24, completion: 8, generateTokens: 8, repeats: 2 },
};

function ids(random, rows, length, vocab) {
  return Array.from({ length: rows }, () => Array.from({ length }, () => Math.floor(random() * Math.min(vocab, 256))));
}

async function timeIt(repeats, run) {
  await run(); // warm-up: graph optimisation and first allocation
  const start = now();
  for (let index = 0; index < repeats; index++) await run();
  return (now() - start) / repeats / 1000;
}

const lines = [];
const log = (line) => {
  lines.push(line);
  console.log(line);
};

for (const preset of presets) {
  const plan = plans[preset];
  const config = getModelPreset(preset);
  let seed = 1;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  let start = now();
  const model = createRandomModel(config, 1);
  const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  log(`## ${preset} (${(parameters / 1e6).toFixed(1)}M parameters, device ${device})`);
  log(`random weights: ${((now() - start) / 1000).toFixed(1)} s`);
  const runtime = createRuntime({ device, ...(args.arena ? { cpuMemoryArena: args.arena === 'on', memoryPattern: args.arena === 'on' } : {}) });
  const lora = { rank: 8, alpha: 16 };
  start = now();
  const lm = await createCausalLm({ model, runtime, lora });
  log(`inference session: ${((now() - start) / 1000).toFixed(1)} s`);
  const batch = { promptIds: ids(random, plan.batch, plan.prompt, config.vocabSize), completionIds: ids(random, plan.batch, plan.completion, config.vocabSize) };
  const tokens = plan.batch * (plan.prompt + plan.completion);
  const scoreSeconds = await timeIt(plan.repeats, () => lm.logprobs(batch));
  log(`log-probs: batch ${plan.batch} x ${plan.prompt + plan.completion} tokens: ${(tokens / scoreSeconds).toFixed(0)} tokens/s (${(scoreSeconds * 1000).toFixed(0)} ms per batch)`);
  if (preset === 'tiny') {
    const referenceStart = now();
    batch.promptIds.forEach((prompt, row) => {
      referenceForward(config, model.weights, [...prompt, ...batch.completionIds[row]]);
    });
    const referenceSeconds = (now() - referenceStart) / 1000;
    log(`  baseline float64 JS reference: ${(tokens / referenceSeconds).toFixed(0)} tokens/s; ONNX graph is ${(referenceSeconds / scoreSeconds).toFixed(1)}x faster`);
  }
  const requests = batch.promptIds.map((promptIds) => ({ promptIds, maxTokens: plan.generateTokens, temperature: 1, seed: 3 }));
  const generateSeconds = await timeIt(plan.repeats, () => generate(lm, requests, { eosTokenIds: [] }));
  const generated = plan.batch * plan.generateTokens;
  log(`generation (KV cache): batch ${plan.batch}, prompt ${plan.prompt}, ${plan.generateTokens} new tokens: ${(generated / generateSeconds).toFixed(1)} tokens/s`);
  const uncachedSeconds = await timeIt(plan.repeats, () => generate(lm, requests, { eosTokenIds: [], useCache: false }));
  log(`  baseline without KV cache: ${(generated / uncachedSeconds).toFixed(1)} tokens/s; KV cache is ${(uncachedSeconds / generateSeconds).toFixed(1)}x faster`);
  log(`peak RSS after inference: ${peakMb()} MB`);
  await lm.release();

  const loraConfig = createLoraAdapter(config, lora, 2);
  const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, loraConfig.config), runtime, objectives: [nllObjective] });
  const trainingBatch = { ...batch, tokenWeights: batch.completionIds.map((row) => row.map(() => 1 / (plan.batch * plan.completion))), objective: { kind: 'nll' } };
  start = now();
  await trainer.run(trainingBatch, loraConfig);
  log(`training session + first step: ${((now() - start) / 1000).toFixed(1)} s`);
  const trainSeconds = await timeIt(plan.repeats, () => trainer.run(trainingBatch, loraConfig));
  log(`training step (nll, LoRA r=8 on all linear layers, loss + gradients): ${(tokens / trainSeconds).toFixed(0)} tokens/s (${(trainSeconds * 1000).toFixed(0)} ms per batch); ${(scoreSeconds / trainSeconds).toFixed(2)}x the log-prob throughput`);
  log(`peak RSS after training: ${peakMb()} MB`);
  await trainer.release();
  log('');
}
