import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createFunctionEmbedder, meanPoolHiddenStates } from './function-embedder';

describe('createFunctionEmbedder', () => {
  it('calls the injected function in batches, keeps order and normalises', async () => {
    const calls: string[][] = [];
    const embedder = createFunctionEmbedder({
      dimensions: 2,
      batchSize: 2,
      embed: async (texts) => {
        calls.push(texts);
        return texts.map((text) => [text.length, 0]);
      },
    });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(calls).toEqual([['a', 'bb'], ['ccc']]);
    expect(vectors).toEqual([
      [1, 0],
      [1, 0],
      [1, 0],
    ]);
    expect(embedder.dimensions).toBe(2);
  });

  it('keeps raw vectors when normalize is off', async () => {
    const embedder = createFunctionEmbedder({ dimensions: 2, normalize: false, embed: async (texts) => texts.map(() => [3, 4]) });
    expect(await embedder.embed(['x'])).toEqual([[3, 4]]);
  });

  it('turns a wrong answer from the model into a clear error', async () => {
    const short = createFunctionEmbedder({ dimensions: 3, embed: async (texts) => texts.map(() => [1, 2]) });
    await expect(short.embed(['x'])).rejects.toThrowError(/2 dimensions for text 0; expected 3/);
    const missing = createFunctionEmbedder({ dimensions: 2, embed: async () => [[1, 2]] });
    await expect(missing.embed(['x', 'y'])).rejects.toThrowError(/returned 1 embeddings for 2 texts/);
    const nan = createFunctionEmbedder({ dimensions: 2, embed: async () => [[1, Number.NaN]] });
    await expect(nan.embed(['x'])).rejects.toSatisfy((error) => AgentFlowError.hasCode(error, 'PARSE_ERROR'));
  });

  it('rejects settings without a function', () => {
    expect(() => createFunctionEmbedder({ dimensions: 2, embed: 'model' as never })).toThrowError(/settings\.embed/);
  });
});

describe('meanPoolHiddenStates', () => {
  it('averages only the unmasked positions of each row', () => {
    // [batch 2, sequence 3, hidden 2]
    const hidden = [1, 2, 3, 4, 100, 100, /* row 2 */ 5, 5, 7, 9, 0, 0];
    const mask = [1, 1, 0, 1, 1, 0];
    expect(meanPoolHiddenStates(hidden, mask, [2, 3, 2])).toEqual([
      [2, 3],
      [6, 7],
    ]);
  });

  it('pools an all-padding row to zeros and checks the shape', () => {
    expect(meanPoolHiddenStates([1, 1], [0], [1, 1, 2])).toEqual([[0, 0]]);
    expect(() => meanPoolHiddenStates([1, 2, 3], [1], [1, 1, 2])).toThrowError(/shape \[1, 1, 2\]/);
  });
});
