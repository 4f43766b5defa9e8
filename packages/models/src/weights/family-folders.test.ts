import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, openSafetensors } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { writeMergedModelFolder } from '../lora/merged-model-folder';
import { createLocalPolicy } from '../policy/local-policy';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { perturbLoraAdapter } from '../testing/perturb-lora';
import { type TinyModelFamily, writeTinyModelFolder } from '../testing/tiny-qwen3-folder';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { checkModelFolder } from './check-model-folder';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';
import { writeRandomModelFolder } from './random-model-folder';

const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const root = mkdtempSync(join(tmpdir(), 'family-folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const jsonSchema = {
  type: 'object',
  properties: { thought: { type: 'string', maxLength: 20 }, answer: { type: 'integer' } },
  required: ['thought', 'answer'],
  additionalProperties: false,
};

/** What each family's folder must hold, as its published checkpoints do. */
const families: { family: TinyModelFamily; config: Record<string, unknown>; tensors: Record<string, number[] | undefined>; eos: number }[] = [
  {
    family: 'qwen2.5',
    config: { architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', vocab_size: 152064, bos_token_id: 151643, eos_token_id: 151645, tie_word_embeddings: false },
    tensors: { 'model.layers.0.self_attn.q_proj.bias': [32], 'model.layers.0.self_attn.v_proj.bias': [16], 'model.layers.0.self_attn.o_proj.bias': undefined, 'model.layers.0.self_attn.q_norm.weight': undefined, 'lm_head.weight': [152064, 32] },
    eos: 151645,
  },
  {
    family: 'qwen3',
    config: { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', vocab_size: 151936, eos_token_id: 151645, tie_word_embeddings: true },
    tensors: { 'model.layers.0.self_attn.q_norm.weight': [16], 'model.layers.0.self_attn.q_proj.bias': undefined, 'lm_head.weight': undefined },
    eos: 151645,
  },
  {
    family: 'llama3.1',
    config: {
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      vocab_size: 128256,
      bos_token_id: 128000,
      eos_token_id: [128001, 128008, 128009],
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
      tie_word_embeddings: false,
    },
    tensors: { 'model.layers.0.self_attn.q_proj.bias': undefined, 'model.layers.0.self_attn.q_norm.weight': undefined, 'lm_head.weight': [128256, 32] },
    eos: 128009,
  },
];

describe.each(families)('a tiny $family folder with its real tokenizer', ({ family, config, tensors, eos }) => {
  const dir = join(root, family);

  it('is written as transformers writes the family, and loads', async () => {
    await writeTinyModelFolder(dir, { family, seed: 4 });
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toMatchObject({ ...config, torch_dtype: 'bfloat16' });
    const file = await openSafetensors(join(dir, 'model.safetensors'));
    try {
      for (const [name, shape] of Object.entries(tensors)) expect(file.entries.get(name)?.shape, name).toEqual(shape);
    } finally {
      await file.close();
    }
    expect(await checkModelFolder(dir)).toMatchObject({ ok: true });
  });

  it('scores a chat completion as the float64 reference does, and generates schema-valid JSON that ends on its EOS', async () => {
    const model = await loadModel(dir);
    const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false } });
    expect(tokenizer.eosTokenIds).toContain(eos);
    const promptIds = tokenizer.encodeChat([{ role: 'user', content: 'What is 2+2? Answer in JSON.' }]);
    const policy = await createLocalPolicy({ model, tokenizer, lora: { rank: 2, alpha: 4 }, runtime });
    try {
      const completion = tokenizer.encode('{"answer": 4}');
      const [scored] = await policy.logprobs({ promptIds: [promptIds], completionIds: [completion] });
      referenceCompletionLogprobs(model.config, model.weights, promptIds, completion).forEach((value, index) => {
        expect(Math.abs(scored![index]! - value)).toBeLessThan(1e-4);
      });
      const [sample] = await policy.generate([{ promptIds, maxTokens: 32, temperature: 1, jsonSchema, seed: 1 }]);
      expect(sample!.finishReason).toBe('stop');
      expect(Object.keys(JSON.parse(sample!.text)).sort()).toEqual(['answer', 'thought']);
    } finally {
      await policy.release();
    }
  });
});

describe('the Llama 3.1 tokenizer in a Llama folder', () => {
  it('encodes as Llama 3 does and renders its chat template with one <|begin_of_text|>', async () => {
    const tokenizer = await loadTokenizer(join(root, 'llama3.1'));
    expect(tokenizer.encode('Hello world')).toEqual([9906, 1917]);
    const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
    expect(tokenizer.applyChatTemplate(messages)).toBe(
      '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    const ids = tokenizer.encodeChat(messages);
    expect(ids[0]).toBe(128000);
    expect(ids.filter((id) => id === 128000)).toHaveLength(1);
  });

  it('keeps the preset EOS ids when the copied tokenizer ends on one of them', async () => {
    const tokenizerDir = join(root, 'llama3.1');
    const written = await writeRandomModelFolder({ preset: 'tiny-llama3.1-vocab', outDir: join(root, 'llama-init'), seed: 1, tokenizerDir });
    expect(written.config.eosTokenIds).toEqual([128001, 128008, 128009]);
  });
});

describe('a merged adapter on a Qwen2 model', () => {
  it('keeps the q/k/v biases, and scores as the base with the adapter', async () => {
    const baseDir = join(root, 'qwen2-base');
    const config = { ...getModelPreset('tiny-qwen2'), vocabSize: 300 };
    await saveModelFolder(baseDir, createRandomModel(config, 2, { std: 0.3, biasStd: 0.3 })); // with the byte-level tokenizer
    const base = await loadModel(baseDir);
    const policy = await createLocalPolicy({ model: base, lora: { rank: 2, alpha: 4 }, runtime, seed: 3 });
    const batch = { promptIds: [[1, 2, 3]], completionIds: [[4, 5]] };
    try {
      perturbLoraAdapter(policy.adapter, { seed: 1 });
      await policy.save(join(root, 'qwen2-adapter'));
      const adapted = await policy.logprobs(batch);
      await writeMergedModelFolder({ baseDir, adapterDir: join(root, 'qwen2-adapter'), outDir: join(root, 'qwen2-merged') });
      const merged = await loadModel(join(root, 'qwen2-merged'));
      expect(merged.config.architecture).toBe('qwen2');
      expect(merged.weights.get('model.layers.1.self_attn.k_proj.bias')!.data).toEqual(base.weights.get('model.layers.1.self_attn.k_proj.bias')!.data);
      referenceCompletionLogprobs(merged.config, merged.weights, batch.promptIds[0]!, batch.completionIds[0]!).forEach((value, index) => {
        expect(Math.abs(adapted[0]![index]! - value)).toBeLessThan(1e-4);
      });
    } finally {
      await policy.release();
    }
  });

  it('refuses a folder that lacks a bias its family implies, naming it, from the headers', async () => {
    const model = createRandomModel({ ...getModelPreset('tiny-qwen2'), vocabSize: 300 }, 1);
    model.weights.delete('model.layers.1.self_attn.v_proj.bias');
    const dir = join(root, 'qwen2-missing');
    await saveModelFolder(dir, model, { tokenizer: null });
    await expect(loadModel(dir)).rejects.toThrow(`Weight model.layers.1.self_attn.v_proj.bias is missing from the safetensors files in ${dir}.`);
  });
});
