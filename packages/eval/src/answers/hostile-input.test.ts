import type { LanguageModel } from '@agentflow/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AnswerFormat, checkAnswer } from './check-answer';
import { checkGameOf24 } from './game-of-24';
import { createLlmJudge } from './llm-judge';
import { parseNumericAnswer } from './math-answer';

const formats: AnswerFormat[] = [
  { type: 'math' },
  { type: 'game_of_24', numbers: [1, 2, 3, 4] },
  { type: 'choice', choices: ['a', 'b'] },
  { type: 'exact_match' },
];

describe('untrusted model output', () => {
  it('never makes a checker throw', () => {
    const pieces = fc.constantFrom('<answer>', '</answer>', '\\boxed{', '}', '{', '\\frac', '(', ')', '^', '×', '÷', '9', '-', ',', '$', '\n', 'x', '=');
    const text = fc.oneof(fc.string(), fc.array(pieces, { maxLength: 60 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(text, (response) => {
        for (const format of formats) checkAnswer(response, ['24'], format);
        checkGameOf24(response, [1, 2, 3, 4]);
        parseNumericAnswer(response);
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('a judge reply made of braces fails fast instead of parsing for minutes', async () => {
    const model: LanguageModel = {
      specificationVersion: 'v1',
      provider: 'replay',
      modelId: 'judge',
      chat: async () => ({ text: '{'.repeat(50_000) + '}'.repeat(50_000), finishReason: 'stop', model: 'judge' }),
    };
    const started = Date.now();
    const result = await createLlmJudge({ model }).judge('q', '1', '1');
    expect(result.status).toBe('failed');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
