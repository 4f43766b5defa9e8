import {
  AgentFlowError,
  type ChatMessage,
  type PolicyGenerateRequest,
  type PolicyGeneration,
  type TrainablePolicy,
} from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateObject } from '../structured/generate-object';
import { type ChatTokenizer, createPolicyModel } from './policy-model';

/** Byte-level chat tokenizer: `<role>content` per message, then `<assistant>`. */
const byteTokenizer: ChatTokenizer = {
  encodeChat: (messages: ChatMessage[]) => [
    ...Buffer.from(messages.map((m) => `<${m.role}>${m.content}`).join('') + '<assistant>'),
  ],
  decode: (ids: number[]) => Buffer.from(ids).toString('utf8'),
};

/** A tiny policy that "generates" a fixed reply and reports a log-prob per byte. */
function fakePolicy(reply: string | ((request: PolicyGenerateRequest) => string), logprobShortfall = 0) {
  const batches: PolicyGenerateRequest[][] = [];
  const policy: TrainablePolicy = {
    async generate(requests) {
      batches.push(requests);
      return requests.map((request): PolicyGeneration => {
        const text = typeof reply === 'string' ? reply : reply(request);
        const tokenIds = [...Buffer.from(text)];
        return {
          tokenIds,
          text,
          logprobs: tokenIds.slice(logprobShortfall).map((id) => -id / 1000),
          finishReason: tokenIds.length >= request.maxTokens ? 'length' : 'stop',
        };
      });
    },
    logprobs: async () => [],
    accumulateGradients: async () => ({ loss: 0, tokens: 0 }),
    applyGradients: async () => ({ gradNorm: 0 }),
    save: async () => {},
    load: async () => {},
  };
  return { policy, batches };
}

const messages: ChatMessage[] = [{ role: 'user', content: 'Q: 2+2?' }];

describe('createPolicyModel', () => {
  it('returns the exact prompt ids, completion ids and sampling log-probs', async () => {
    const { policy, batches } = fakePolicy('{"answer":4}');
    const model = createPolicyModel({ policy, tokenizer: byteTokenizer, modelId: 'tiny', maxTokens: 32 });
    const schema = { type: 'object' };
    const response = await model.chat({ messages, jsonSchema: schema, temperature: 0.7, seed: 3 });
    expect(response.promptTokenIds).toEqual(byteTokenizer.encodeChat(messages));
    expect(byteTokenizer.decode(response.completionTokenIds ?? [])).toBe('{"answer":4}');
    expect(response.completionLogprobs).toHaveLength(12);
    expect(response.completionLogprobs?.[0]).toBeCloseTo(-0.123);
    expect(response).toMatchObject({ text: '{"answer":4}', finishReason: 'stop', model: 'tiny' });
    expect(batches[0]?.[0]).toMatchObject({ maxTokens: 32, temperature: 0.7, seed: 3, jsonSchema: schema });
    expect(model.provider).toBe('local');
  });

  it('batches the calls of one tick into one generate call', async () => {
    const { policy, batches } = fakePolicy((request) => String(request.promptIds.length));
    const model = createPolicyModel({ policy, tokenizer: byteTokenizer, maxBatchSize: 2 });
    const replies = await Promise.all(
      ['a', 'bb', 'ccc'].map((content) => model.chat({ messages: [{ role: 'user', content }] }).then((r) => r.text)),
    );
    expect(replies).toEqual(['18', '19', '20']);
    expect(batches.map((batch) => batch.length)).toEqual([2, 1]);
  });

  it('plugs into generateObject', async () => {
    const { policy } = fakePolicy('noise {"answer":4} noise');
    const model = createPolicyModel({ policy, tokenizer: byteTokenizer });
    const result = await generateObject(model, z.object({ answer: z.number() }), messages, { maxRepairs: 0 });
    expect(result.ok && result.value).toEqual({ answer: 4 });
  });

  it('rejects a generation whose log-probs do not line up with its tokens', async () => {
    const { policy } = fakePolicy('abc', 1);
    const model = createPolicyModel({ policy, tokenizer: byteTokenizer });
    const error = await model.chat({ messages }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'SHAPE_MISMATCH')).toBe(true);
  });

  it('honours an aborted signal', async () => {
    const { policy, batches } = fakePolicy('x');
    const model = createPolicyModel({ policy, tokenizer: byteTokenizer });
    const controller = new AbortController();
    controller.abort();
    await expect(model.chat({ messages, signal: controller.signal })).rejects.toThrow(/cancelled/);
    expect(batches).toHaveLength(0);
  });
});
