// Tokenizer encode time: transformers.js's own BPE merge loop against the one loadTokenizer
// installs (src/tokenizer/fast-bpe.ts), on the same prompts, in the same process. The prompts are
// a run's collected planner prompts (the chat template applied), or, without a run, the real
// Qwen3 tokenizer on generated text. Each prompt is encoded once per round on a cold cache
// (a new tokenizer per round), then once more warm, as a group's rollouts repeat their first prompt.
// Usage: node bench/tokenizer-encode-bench.mjs --run RUN_DIR [--prompts 3000] [--rounds 3]
//        (after pnpm --filter @agentflow/models build; RUN_DIR from `agentflow run`, e.g. runs/<date-time>)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadTokenizer } from '@agentflow/models';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
if (!args.run) {
  console.error('usage: node bench/tokenizer-encode-bench.mjs --run RUN_DIR [--prompts 3000] [--rounds 3]');
  process.exit(2);
}
const promptCount = Number(args.prompts ?? 3000);
const rounds = Number(args.rounds ?? 3);
const folder = join(args.run, 'models', 'policy');

const tokenizer = await loadTokenizer(folder);
const prompts = [];
for (const line of readFileSync(join(args.run, 'trajectories.jsonl'), 'utf8').split('\n')) {
  if (!line) continue;
  for (const step of JSON.parse(line).steps) {
    if (step.prompt && prompts.length < promptCount) prompts.push(tokenizer.applyChatTemplate(step.prompt));
  }
}

/** transformers.js's tokenizer for the folder, its merge loop untouched. */
async function reference() {
  const { PreTrainedTokenizer } = await import('@huggingface/transformers');
  const read = (name) => JSON.parse(readFileSync(join(folder, name), 'utf8'));
  const hf = new PreTrainedTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
  return (text) => hf.encode(text, { add_special_tokens: false });
}
async function fast() {
  const loaded = await loadTokenizer(folder);
  return (text) => loaded.encode(text);
}

function time(encode) {
  const started = performance.now();
  let tokens = 0;
  for (const prompt of prompts) tokens += encode(prompt).length;
  return { ms: performance.now() - started, tokens };
}

const rows = [];
for (let round = 1; round <= rounds; round++) {
  for (const [name, make] of [
    ['transformers.js', reference],
    ['fast-bpe', fast],
  ]) {
    const encode = await make();
    const cold = time(encode);
    const warm = time(encode);
    rows.push({ round, name, cold, warm });
  }
}
const mean = (name, key) => rows.filter((row) => row.name === name).reduce((sum, row) => sum + row[key].ms, 0) / rounds;
const [refCold, fastCold, refWarm, fastWarm] = [mean('transformers.js', 'cold'), mean('fast-bpe', 'cold'), mean('transformers.js', 'warm'), mean('fast-bpe', 'warm')];
const characters = prompts.reduce((sum, prompt) => sum + prompt.length, 0);
console.log(`${prompts.length} planner prompts of ${folder} (mean ${(characters / prompts.length).toFixed(0)} characters, ${rows[0].cold.tokens} tokens in all), ${rounds} rounds`);
console.log(`cold cache: transformers.js ${refCold.toFixed(0)} ms, fast-bpe ${fastCold.toFixed(0)} ms: ${(fastCold / refCold).toFixed(2)}x`);
console.log(`warm cache: transformers.js ${refWarm.toFixed(0)} ms, fast-bpe ${fastWarm.toFixed(0)} ms: ${(fastWarm / refWarm).toFixed(2)}x`);
console.log(`the same tokens: ${rows.every((row) => row.cold.tokens === rows[0].cold.tokens) ? 'yes (token counts equal in every round)' : 'NO'}`);
