import type { ChatRequest, LanguageModel } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createLlmJudge } from './llm-judge';

/** A chat model that replies with fixed texts, recording the requests (stands in for a paid API). */
function replayModel(replies: string[]): LanguageModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    specificationVersion: 'v1',
    provider: 'replay',
    modelId: 'judge',
    requests,
    async chat(request) {
      requests.push(request);
      const text = replies.shift();
      if (text === undefined) throw new Error('connection refused');
      return { text, finishReason: 'stop', model: 'judge' };
    },
  };
}

describe('createLlmJudge', () => {
  it('accepts a reply with keys the schema does not name, dropping them, and still asks for a closed object', async () => {
    const model = replayModel(['```json\n{"analysis": "same river", "correct": true, "confidence": 0.95, "notes": {"lang": "fr"}}\n```']);
    const result = await createLlmJudge({ model }).judge('Which river flows through Paris?', 'Seine', 'La Seine');
    expect(result).toEqual({ status: 'ok', verdict: { analysis: 'same river', correct: true }, droppedKeys: ['confidence', 'notes'] });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.jsonSchema).toMatchObject({ additionalProperties: false });
  });

  it('still fails a reply whose verdict is missing or ill-typed, naming the field', async () => {
    const model = replayModel(['{"analysis": "close", "correct": "yes", "confidence": 0.5}', '{"analysis": "close", "confidence": 0.5}']);
    const judge = createLlmJudge({ model });
    const illTyped = await judge.judge('q', '1', '1');
    expect(illTyped).toMatchObject({ status: 'failed', reason: expect.stringMatching(/correct: Invalid input: expected boolean/) });
    expect(illTyped.status === 'failed' && illTyped.reason).not.toMatch(/Unrecognized/);
    const missing = await judge.judge('q', '1', '1');
    expect(missing).toMatchObject({ status: 'failed', reason: expect.stringMatching(/correct: Invalid input: expected boolean, received undefined/) });
  });
});
