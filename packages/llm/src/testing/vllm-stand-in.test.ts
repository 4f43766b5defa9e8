import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalPolicy, createLoraAdapter, type LocalPolicy, loadModel, loadTokenizer, type ModelTokenizer, saveLoraAdapter } from '@agentflow/models';
import { perturbLoraAdapter, writeTinyModelFolder, writeTinyQwen3Folder } from '@agentflow/models/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVllmServers } from '../vllm/vllm-servers';
import { startVllmStandIn, type VllmStandIn } from './index';

const messages = [{ role: 'user' as const, content: 'What is 2+2? Answer as JSON.' }];
const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };

const maxGap = (left: readonly number[], right: readonly number[]) => Math.max(...left.map((value, index) => Math.abs(value - right[index]!)));

describe('the vLLM stand-in, through createVllmServers', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentflow-standin-'));
  const modelDir = join(root, 'model');
  const adapterDir = join(root, 'adapter-v1');
  let standIn: VllmStandIn;
  let tokenizer: ModelTokenizer;
  let base: LocalPolicy;
  let tuned: LocalPolicy;

  beforeAll(async () => {
    await writeTinyQwen3Folder(modelDir, { seed: 3 });
    const model = await loadModel(modelDir);
    tokenizer = await loadTokenizer(modelDir);
    // An adapter with non-zero B, so that it changes what the model samples.
    const adapter = createLoraAdapter(model.config, { rank: 4, alpha: 8 }, 1);
    perturbLoraAdapter(adapter, { seed: 2 });
    await saveLoraAdapter(adapterDir, adapter, modelDir);
    base = await createLocalPolicy({ model, tokenizer, lora: { rank: 4, alpha: 8 }, device: 'cpu' });
    tuned = await createLocalPolicy({ model, tokenizer, adapter, device: 'cpu' });
    standIn = await startVllmStandIn({ modelDir, servedModelName: 'tiny', maxLoraRank: 8 });
  }, 120_000);
  afterAll(async () => {
    await standIn?.close();
    await base?.release();
    await tuned?.release();
  });

  it('samples token ids whose log-probs ONNX Runtime recomputes within 1e-4, base and adapter alike', async () => {
    const servers = createVllmServers({ urls: [standIn.url], model: 'tiny', tokenizer, warn: () => {} });
    const plain = await servers.languageModel.chat({ messages, maxTokens: 12, seed: 7 });
    expect(plain.promptTokenIds).toEqual(tokenizer.encodeChat(messages));
    expect(plain.completionTokenIds).toHaveLength(12);
    const [recomputed] = await base.logprobs({ promptIds: [plain.promptTokenIds!], completionIds: [plain.completionTokenIds!] });
    expect(maxGap(recomputed!, plain.completionLogprobs!)).toBeLessThan(1e-4);

    const report = await servers.loadAdapter('tiny-step1', adapterDir);
    expect(report).toEqual({ loaded: [standIn.url], failed: [] });
    expect(await servers.listAdapters(standIn.url)).toEqual(['tiny-step1']);
    servers.useAdapter('tiny-step1');
    const adapted = await servers.languageModel.chat({ messages, maxTokens: 12, seed: 7 });
    expect(adapted.policyVersion).toBe('tiny-step1');
    const [withAdapter] = await tuned.logprobs({ promptIds: [adapted.promptTokenIds!], completionIds: [adapted.completionTokenIds!] });
    expect(maxGap(withAdapter!, adapted.completionLogprobs!)).toBeLessThan(1e-4);
    // The same seed on the same prompt samples the same tokens the local policy does.
    const [local] = await tuned.generate([{ promptIds: adapted.promptTokenIds!, maxTokens: 12, temperature: 1, seed: 7 }]);
    expect(adapted.completionTokenIds).toEqual(local!.tokenIds);
  }, 120_000);

  it('constrains the completion to the JSON schema (structured_outputs and guided_json)', async () => {
    for (const guidedDecoding of ['structured_outputs', 'guided_json'] as const) {
      const servers = createVllmServers({ urls: [standIn.url], model: 'tiny', tokenizer, guidedDecoding, warn: () => {} });
      const reply = await servers.languageModel.chat({ messages, jsonSchema: schema, maxTokens: 24, seed: 1 });
      if (reply.finishReason === 'stop') expect(Object.keys(JSON.parse(reply.text))).toEqual(['answer']);
      else expect(reply.text.startsWith('{"answer":')).toBe(true);
    }
  }, 120_000);

  it('answers as vLLM does for adapters it cannot load, already has, or does not have', async () => {
    const warnings: string[] = [];
    const servers = createVllmServers({ urls: [standIn.url], model: 'tiny', tokenizer, maxRetries: 0, warn: (line) => warnings.push(line) });
    await expect(servers.loadAdapter('tiny-step1', adapterDir)).rejects.toThrow(/has already been loaded/);
    await expect(servers.loadAdapter('tiny-missing', join(root, 'nowhere'))).rejects.toThrow(/No vLLM server could load adapter tiny-missing/);
    expect(await servers.unloadAdapter('tiny-step1')).toEqual([]);
    expect(standIn.adapters()).toEqual([]);
    servers.useAdapter('tiny-step1');
    await expect(servers.languageModel.chat({ messages, maxTokens: 2 })).rejects.toThrow(/HTTP 404|does not exist/);
    expect(standIn.events.map((event) => event.kind)).toEqual(expect.arrayContaining(['load', 'unload', 'completion']));
  }, 120_000);
});

describe.each(['qwen2.5', 'llama3.1'] as const)('the vLLM stand-in serving a %s folder', (family) => {
  it("samples the family's chat prompt with a LoRA adapter, and ONNX Runtime recomputes the log-probs within 1e-4", async () => {
    const root = mkdtempSync(join(tmpdir(), `agentflow-standin-${family}-`));
    const modelDir = await writeTinyModelFolder(join(root, 'model'), { family, seed: 5 });
    const model = await loadModel(modelDir);
    const tokenizer = await loadTokenizer(modelDir);
    const adapter = createLoraAdapter(model.config, { rank: 4, alpha: 8 }, 1);
    perturbLoraAdapter(adapter, { seed: 2 });
    await saveLoraAdapter(join(root, 'adapter'), adapter, modelDir);
    const tuned = await createLocalPolicy({ model, tokenizer, adapter, device: 'cpu' });
    const standIn = await startVllmStandIn({ modelDir, servedModelName: family, maxLoraRank: 8 });
    try {
      const servers = createVllmServers({ urls: [standIn.url], model: family, tokenizer, warn: () => {} });
      expect(await servers.loadAdapter(`${family}-step1`, join(root, 'adapter'))).toEqual({ loaded: [standIn.url], failed: [] });
      servers.useAdapter(`${family}-step1`);
      const reply = await servers.languageModel.chat({ messages, maxTokens: 8, seed: 7 });
      expect(reply.policyVersion).toBe(`${family}-step1`);
      expect(reply.promptTokenIds).toEqual(tokenizer.encodeChat(messages));
      expect(tokenizer.decode(reply.promptTokenIds!)).toContain('What is 2+2? Answer as JSON.');
      const [recomputed] = await tuned.logprobs({ promptIds: [reply.promptTokenIds!], completionIds: [reply.completionTokenIds!] });
      expect(maxGap(recomputed!, reply.completionLogprobs!)).toBeLessThan(1e-4);
    } finally {
      await standIn.close();
      await tuned.release();
    }
  }, 120_000);
});
