import { createGraphBuilder, createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import type { Qwen3Config } from '../config/qwen3-config';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { createRandomModel } from '../weights/random-model';
import { buildDecoder } from '../graph/decoder-graph';
import { createCausalLm } from './causal-lm';
import { createKeyValueCache } from './key-value-cache';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

const small = (overrides: Partial<Qwen3Config>): Qwen3Config => ({
  ...getModelPreset('tiny'),
  vocabSize: 40,
  hiddenSize: 24,
  intermediateSize: 40,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 8, // != hidden / heads
  ...overrides,
});

const batch = {
  promptIds: [[1, 5, 9], [3], [7, 7, 2, 11, 4]],
  completionIds: [[4, 2, 30], [12, 0, 5, 6, 39], [8]],
};

describe('Qwen3 graph log-probs', () => {
  for (const [label, config] of [
    ['tied head, GQA', small({ tieWordEmbeddings: true })],
    ['untied head, GQA, rope_theta 1e6', small({ tieWordEmbeddings: false, ropeTheta: 1e6 })],
    ['untied head, MHA', small({ tieWordEmbeddings: false, numKeyValueHeads: 4 })],
  ] as const) {
    it(`match the float64 reference within 1e-4 (${label})`, async () => {
      const model = createRandomModel(config, 11, { std: 0.3, normNoise: 0.2 });
      const lm = await createCausalLm({ model, runtime });
      const { logprobs, entropy } = await lm.logprobs(batch, { entropy: true });
      batch.promptIds.forEach((prompt, row) => {
        const expected = referenceCompletionLogprobs(config, model.weights, prompt, batch.completionIds[row]!);
        expect(logprobs[row]!.length).toBe(expected.length);
        logprobs[row]!.forEach((value, index) => {
        expect(Math.abs(value - expected[index]!)).toBeLessThan(1e-4);
      });
      });
      for (const row of entropy!) for (const value of row) expect(value).toBeGreaterThan(0);
      await lm.release();
    });
  }

  it('refuses token ids outside the vocabulary and sequences beyond max_position_embeddings', async () => {
    const config = small({ maxPositionEmbeddings: 6 });
    const lm = await createCausalLm({ model: createRandomModel(config, 1), runtime });
    await expect(lm.logprobs({ promptIds: [[1, 2]], completionIds: [[40]] })).rejects.toThrow(/token id 40, outside the model's vocabulary \[0, 40\)/);
    await expect(lm.logprobs({ promptIds: [[1, 2, 3, 4]], completionIds: [[1, 2, 3]] })).rejects.toThrow(/7 tokens exceeds the model's max_position_embeddings 6/);
    await expect(lm.logprobs({ promptIds: [[]], completionIds: [[1]] })).rejects.toThrow(/Prompt 0 is empty/);
    await lm.release();
  });

  it('a step refuses a cache without room for its tokens and a mask wider than them; a cached graph refuses blocked attention', async () => {
    const config = small({});
    const model = createRandomModel(config, 1);
    const lm = await createCausalLm({ model, runtime });
    const ids = (width: number) => ({ dtype: 'int64' as const, shape: [1, width], data: new BigInt64Array(width).fill(1n) });
    const cache = createKeyValueCache(config, 1, 3);
    await lm.step({ inputIds: ids(2), attentionMask: ids(2), positionIds: ids(2), cache });
    expect(cache.length).toBe(2);
    await expect(lm.step({ inputIds: ids(2), attentionMask: ids(2), positionIds: ids(2), cache })).rejects.toThrow(/does not fit a KV cache of 1 rows with 1 of 3 slots free/);
    await expect(lm.step({ inputIds: ids(1), attentionMask: ids(3), positionIds: ids(1), cache })).rejects.toThrow(/masks the new tokens only, \[1, 1\]/);
    expect(() => buildDecoder(createGraphBuilder({ name: 'cached' }), config, model.weights, { kvCache: true, attention: { kind: 'blocked', blockSize: 4 } })).toThrow(
      /a graph with a KV cache computes full attention/,
    );
    await lm.release();
  });
});
