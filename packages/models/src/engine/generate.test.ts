import { createRandom, plannerActionSchema } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { getModelPreset } from '../config/presets';
import { createJsonSchemaConstraints } from '../constrained/token-constraint';
import { createRandomModel } from '../weights/random-model';
import { type CausalLm, createCausalLm } from './causal-lm';
import { generate } from './generate';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

const config = getModelPreset('tiny');
const eosTokenIds = config.eosTokenIds;
const bytes = { decode: (ids: readonly number[]) => new TextDecoder().decode(Uint8Array.from(ids.filter((id) => id < 256))) };
let lm: CausalLm;

beforeAll(async () => {
  lm = await createCausalLm({ model: createRandomModel(config, 21, { std: 0.5 }), runtime });
});

const prompts = [[257, 117, 10, 104, 105], [257, 10], [97, 98, 99, 100, 101, 102, 103, 104]];

describe('generation', () => {
  it('KV-cache greedy decoding equals cache-free greedy decoding, batched with left padding', async () => {
    const requests = prompts.map((promptIds) => ({ promptIds, maxTokens: 12, temperature: 0 }));
    const cached = await generate(lm, requests, { eosTokenIds: [] });
    const uncached = await generate(lm, requests, { eosTokenIds: [], useCache: false });
    expect(cached.map((row) => row.tokenIds)).toEqual(uncached.map((row) => row.tokenIds));
    // Each row alone gives the same tokens as in the batch: padding changes nothing.
    const alone = await generate(lm, [requests[1]!], { eosTokenIds: [] });
    expect(alone[0]!.tokenIds).toEqual(cached[1]!.tokenIds);
    expect(new Set(cached[0]!.tokenIds).size).toBeGreaterThan(1);
  });

  it('a prefill in chunks of 3 tokens gives the tokens and log-probs of one whole prefill', async () => {
    const requests = prompts.map((promptIds, index) => ({ promptIds, maxTokens: 8, temperature: 0.9, seed: index }));
    const whole = await generate(lm, requests, { eosTokenIds: [] });
    const chunked = await generate(lm, requests, { eosTokenIds: [], prefillChunkTokens: 3 });
    expect(chunked.map((row) => row.tokenIds)).toEqual(whole.map((row) => row.tokenIds));
    chunked.forEach((row, index) => {
      row.logprobs.forEach((value, k) => {
        expect(Math.abs(value - whole[index]!.logprobs[k]!)).toBeLessThan(1e-4);
      });
    });
    await expect(generate(lm, requests, { eosTokenIds: [], prefillChunkTokens: 0 })).rejects.toThrow(/prefillChunkTokens must be a positive integer, got 0/);
  });

  it('the capacity cache samples the tokens and log-probs of the cache-free recomputation: left padding, a chunked prefill, rows ending early', async () => {
    const eosTokenId = (await generate(lm, [{ promptIds: prompts[1]!, maxTokens: 3, temperature: 1, seed: 1 }], { eosTokenIds: [] }))[0]!.tokenIds[2]!;
    // Row 1 draws the token chosen as EOS within 3 steps (seeded as above), row 2 stops at maxTokens 4: both stay in the batch, fed padding.
    const requests = prompts.map((promptIds, index) => ({ promptIds, maxTokens: index === 2 ? 4 : 10, temperature: 1, seed: index }));
    const settings = { eosTokenIds: [eosTokenId], prefillChunkTokens: 3 };
    const cached = await generate(lm, requests, settings);
    const recomputed = await generate(lm, requests, { ...settings, useCache: false });
    expect(cached.map((row) => row.finishReason)).toEqual(recomputed.map((row) => row.finishReason));
    expect(cached[1]!.finishReason).toBe('stop');
    expect(cached[1]!.tokenIds.length).toBeLessThanOrEqual(3);
    expect(cached[2]!.tokenIds).toHaveLength(4);
    expect(cached.map((row) => row.tokenIds)).toEqual(recomputed.map((row) => row.tokenIds));
    // The cache changes only the order of float32 sums.
    cached.forEach((row, index) => {
      row.logprobs.forEach((value, k) => {
        expect(Math.abs(value - recomputed[index]!.logprobs[k]!)).toBeLessThan(1e-5);
      });
    });
  });

  it('sampling log-probs equal the log-probs recomputed for the same tokens', async () => {
    const requests = prompts.map((promptIds, index) => ({ promptIds, maxTokens: 10, temperature: 0.9, topP: 0.95, topK: 50, seed: index }));
    const samples = await generate(lm, requests, { eosTokenIds });
    const { logprobs } = await lm.logprobs({ promptIds: prompts, completionIds: samples.map((row) => row.tokenIds) });
    samples.forEach((row, index) => {
      row.logprobs.forEach((value, k) => {
        expect(Math.abs(value - logprobs[index]![k]!)).toBeLessThan(1e-4);
      });
    });
    const again = await generate(lm, requests, { eosTokenIds });
    expect(again.map((row) => row.tokenIds)).toEqual(samples.map((row) => row.tokenIds)); // seeded
  });

  it('stops at stop strings and at maxTokens', async () => {
    const [free] = await generate(lm, [{ promptIds: prompts[0]!, maxTokens: 20, temperature: 0 }], { eosTokenIds: [], tokenizer: bytes });
    const stop = free!.text.slice(3, 5);
    const [stopped] = await generate(lm, [{ promptIds: prompts[0]!, maxTokens: 20, temperature: 0, stop: [stop] }], { eosTokenIds: [], tokenizer: bytes });
    expect(stopped!.finishReason).toBe('stop');
    expect(stopped!.text).toBe(free!.text.slice(0, free!.text.indexOf(stop)));
    expect(free!.finishReason).toBe('length');
    expect(free!.tokenIds).toHaveLength(20);
  });

  it('1,000 schema-constrained samples from a random model all parse and validate', async () => {
    // The cheapest model that still runs the real decoder graph: one layer, hidden 16, byte vocabulary.
    const micro = await createCausalLm({
      model: createRandomModel({ ...config, hiddenSize: 16, intermediateSize: 16, numHiddenLayers: 1, numAttentionHeads: 2, numKeyValueHeads: 1, headDim: 8 }, 5, { std: 0.5 }),
      runtime,
    });
    const tools = ['search', 'python'];
    const schema = plannerActionSchema.extend({ action: z.enum(['finish', ...tools]) });
    const jsonSchema = z.toJSONSchema(schema) as Record<string, unknown>;
    const constraintFor = createJsonSchemaConstraints({
      tokenBytes: [...Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte)), undefined, undefined, undefined],
      eosTokenIds,
    });
    const random = createRandom(99);
    let valid = 0;
    const finishes = new Set<string>();
    for (let round = 0; round < 10; round++) {
      const requests = Array.from({ length: 100 }, (_, index) => ({
        promptIds: prompts[index % prompts.length]!,
        maxTokens: 64,
        temperature: 1,
        jsonSchema,
      }));
      const samples = await generate(micro, requests, { eosTokenIds, tokenizer: bytes, constraintFor, random: random.fork(`round-${round}`) });
      for (const sample of samples) {
        const parsed = schema.safeParse(JSON.parse(sample.text));
        if (parsed.success) valid++;
        else throw new Error(`invalid: ${sample.text}`);
        finishes.add(sample.finishReason);
      }
    }
    expect(valid).toBe(1000);
    expect(finishes).toEqual(new Set(['stop']));
    await micro.release();
  });
});
