import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@agentflow/core';
import { createRuntime, openSafetensors } from '@agentflow/tensor';
import { Template } from '@huggingface/jinja';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { writeMergedModelFolder } from '../lora/merged-model-folder';
import { createLocalPolicy } from '../policy/local-policy';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { perturbLoraAdapter } from '../testing/perturb-lora';
import { type TinyModelFamily, writeTinyModelFolder } from '../testing/tiny-qwen3-folder';
import { loadTokenizer, type ModelTokenizer } from '../tokenizer/load-tokenizer';
import { checkModelFolder } from './check-model-folder';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';
import { writeRandomModelFolder } from './random-model-folder';

const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
/** Each family's tokenizer, loaded once (thinking off, as the trainer's default): a load takes seconds. */
const tokenizers = new Map<TinyModelFamily, ModelTokenizer>();
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
    // Llama's template dates its system header with strftime_now unless told the date: pinned here.
    const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false, date_string: '26 Jul 2024' } });
    tokenizers.set(family, tokenizer);
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

/** A tool-using chat of each message kind, with one tool call per assistant turn (all Llama 3.1 takes). */
const tools = [{ type: 'function', function: { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }];
const toolChat = [
  { role: 'system', content: 'Use the tools.' },
  { role: 'user', content: 'Search for cats' },
  { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'search', arguments: { q: 'cats' } } }] },
  { role: 'tool', content: '{"result": "cats purr"}' },
  { role: 'assistant', content: 'Cats purr.' },
  { role: 'user', content: 'Thanks' },
] as unknown as ChatMessage[];

/** What each family's own template writes for the chat above: its tools block, tool call and tool result. */
const templates: { family: TinyModelFamily; parts: string[]; thinks: boolean }[] = [
  {
    family: 'qwen2.5',
    parts: [
      '<|im_start|>system\nUse the tools.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "search"',
      '<|im_start|>assistant\n<tool_call>\n{"name": "search", "arguments": {"q": "cats"}}\n</tool_call><|im_end|>\n',
      '<|im_start|>user\n<tool_response>\n{"result": "cats purr"}\n</tool_response><|im_end|>\n<|im_start|>assistant\nCats purr.<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n',
    ],
    thinks: false,
  },
  {
    family: 'qwen3',
    parts: ['<tools>\n{"type": "function", "function": {"name": "search"', '<tool_call>\n{"name": "search", "arguments": {"q": "cats"}}\n</tool_call>', '<tool_response>\n{"result": "cats purr"}\n</tool_response>'],
    thinks: true,
  },
  {
    family: 'llama3.1',
    parts: [
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nUse the tools.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n{\n    "type": "function",\n    "function": {\n        "name": "search",',
      '\n\nSearch for cats<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n{"name": "search", "parameters": {"q": "cats"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n',
      '<|start_header_id|>assistant<|end_header_id|>\n\nCats purr.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nThanks<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    ],
    thinks: false,
  },
];

describe.each(templates)("the $family folder's own chat template", ({ family, parts, thinks }) => {
  it(`renders system, user, assistant tool-call and tool messages with tool definitions as transformers.js's engine does, and ${thinks ? 'applies its thinking switch' : 'has no thinking switch: off is what it does, thinking is refused'}`, async () => {
    const dir = join(root, family);
    const tokenizer = tokenizers.get(family)!;
    const rendered = tokenizer.applyChatTemplate(toolChat, { chatTemplateKwargs: { tools } });
    // What transformers.js's apply_chat_template renders: the template under @huggingface/jinja, unbounded.
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    const special = Object.fromEntries(['bos_token', 'eos_token', 'pad_token'].filter((key) => typeof config[key] === 'string').map((key) => [key, config[key]]));
    expect(rendered).toBe(new Template(config.chat_template).render({ messages: toolChat, add_generation_prompt: true, tools, documents: null, ...special, enable_thinking: false, date_string: '26 Jul 2024' }));
    let from = 0;
    for (const part of parts) {
      const at = rendered.indexOf(part, from);
      expect(at, `${family} renders ${JSON.stringify(part)} after position ${from}`).toBeGreaterThanOrEqual(from);
      from = at + part.length;
    }

    const chat = [{ role: 'user' as const, content: 'What is 2+2?' }];
    // Loaded with enable_thinking false: Qwen3's closes an empty thought; the others render as without it.
    const off = tokenizer.applyChatTemplate(chat);
    if (thinks) {
      expect(off).toBe(`${tokenizer.applyChatTemplate(chat, { chatTemplateKwargs: { enable_thinking: true } })}<think>\n\n</think>\n\n`);
      return;
    }
    expect(off).toBe(new Template(config.chat_template).render({ messages: chat, add_generation_prompt: true, tools: null, documents: null, ...special, date_string: '26 Jul 2024' }));
    expect(() => tokenizer.applyChatTemplate(chat, { chatTemplateKwargs: { enable_thinking: true } })).toThrow(
      `${join(dir, 'tokenizer_config.json')}: chatTemplateKwargs.enable_thinking is true, but this chat template has no thinking switch`,
    );
    await expect(loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: 'yes' } })).rejects.toThrow(/enable_thinking is "yes".*set enable_thinking to false or remove it/);
  });
});

describe('the Llama 3.1 tokenizer in a Llama folder', () => {
  it('encodes as Llama 3 does and renders Llama 3.1\'s chat template with one <|begin_of_text|>', async () => {
    const tokenizer = await loadTokenizer(join(root, 'llama3.1'), { chatTemplateKwargs: { date_string: '26 Jul 2024' } });
    expect(tokenizer.encode('Hello world')).toEqual([9906, 1917]);
    const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
    expect(tokenizer.applyChatTemplate(messages)).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
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
