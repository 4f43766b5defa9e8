import type { ChatRequest, LanguageModel } from '@agentflow/core';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { answerFormatFor, checkAnswer, createAnswerChecker } from './check-answer';
import { createLlmJudge } from './llm-judge';
import { createSympyEquivalence } from './sympy-equivalence';

const hasSympy = spawnSync('python3', ['-I', '-c', 'import sympy']).status === 0;

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

describe('checkAnswer (rules only)', () => {
  it('accepts equal numbers in any notation and rejects different ones', () => {
    const math = { type: 'math' } as const;
    expect(checkAnswer('so <answer>\\dfrac{6}{8}</answer>', ['3/4'], math)).toMatchObject({ correct: true, method: 'numeric', formatted: true });
    expect(checkAnswer('\\boxed{1,000}', ['1000'], math).correct).toBe(true);
    expect(checkAnswer('<answer>33</answer>', ['033'], math).correct).toBe(true);
    expect(checkAnswer('<answer>34</answer>', ['33'], math)).toMatchObject({ correct: false, undecided: false, method: 'numeric' });
    expect(checkAnswer('', ['33'], math)).toMatchObject({ correct: false, method: 'none', extracted: null });
  });

  it('leaves symbolic answers undecided without sympy', () => {
    expect(checkAnswer('<answer>2\\sqrt{2}</answer>', ['\\sqrt{8}'], { type: 'math' })).toMatchObject({ correct: false, undecided: true });
    expect(checkAnswer('<answer>\\sqrt{8}</answer>', ['\\sqrt{8}'], { type: 'math' })).toMatchObject({ correct: true, method: 'string' });
  });

  it('infers the format of an item', () => {
    expect(answerFormatFor({ references: ['x'], numbers: [1, 2, 3, 4] })).toEqual({ type: 'game_of_24', numbers: [1, 2, 3, 4] });
    expect(answerFormatFor({ references: ['B'], choices: ['a', 'b'] })).toEqual({ type: 'choice', choices: ['a', 'b'] });
    expect(answerFormatFor({ references: ['\\frac{1}{2}'] })).toEqual({ type: 'math' });
    expect(answerFormatFor({ references: ['Seine'] })).toEqual({ type: 'exact_match' });
  });

  it('checks Game of 24, choices and short answers', () => {
    const item = { references: ['(1+1+1)×8'], numbers: [1, 1, 1, 8] };
    expect(checkAnswer('<answer>8*(1+1+1)</answer>', item.references, answerFormatFor(item)).correct).toBe(true);
    expect(checkAnswer('<answer>8*(8+1+1)</answer>', item.references, answerFormatFor(item)).correct).toBe(false);
    expect(checkAnswer('<answer>(B)</answer>', ['B'], { type: 'choice' }).correct).toBe(true);
    expect(checkAnswer('<answer>The Seine.</answer>', ['Seine'], { type: 'exact_match' }).correct).toBe(true);
  });
});

describe('createAnswerChecker', () => {
  it.skipIf(!hasSympy)('settles symbolic answers with sympy', async () => {
    const checker = createAnswerChecker({ sympy: createSympyEquivalence() });
    // One python process per check; wrong symbolic answers are covered by the batch test of sympy-equivalence.
    expect(await checker.check('<answer>2\\sqrt{2}</answer>', { references: ['\\sqrt{8}'] })).toMatchObject({ correct: true, method: 'symbolic', undecided: false });
  });

  it('says plainly when sympy is unavailable and falls back to strings', async () => {
    const checker = createAnswerChecker({ sympy: createSympyEquivalence({ pythonPath: '/nonexistent/python3' }) });
    const result = await checker.check('<answer>2\\sqrt{2}</answer>', { references: ['\\sqrt{8}'] });
    expect(result).toMatchObject({ correct: false, undecided: true, detail: expect.stringMatching(/symbolic check unavailable .*compared as strings/) });
  });

  it('asks the LLM judge for free-form answers and records its failures', async () => {
    const model = replayModel(['```json\n{"analysis": "same river", "correct": true}\n```', 'not json at all']);
    const checker = createAnswerChecker({ judge: createLlmJudge({ model }) });
    const item = { question: 'Which river flows through Paris?', references: ['Seine'] };
    expect(await checker.check('<answer>La Seine river</answer>', item)).toMatchObject({ correct: true, method: 'judge', detail: 'same river' });
    expect(model.requests[0]?.jsonSchema).toMatchObject({ type: 'object', required: ['analysis', 'correct'] });
    expect(model.requests[0]?.messages[1]?.content).toContain('Correct answer:\nSeine');
    expect(await checker.check('<answer>Loire</answer>', item)).toMatchObject({ correct: false, detail: expect.stringMatching(/judge output is not/) });
    expect(await checker.check('<answer>Loire</answer>', item)).toMatchObject({ correct: false, detail: expect.stringMatching(/judge replay:judge failed: connection refused/) });
  });
});
