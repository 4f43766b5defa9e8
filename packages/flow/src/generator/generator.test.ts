import type { LanguageModel } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createGenerator, finishInputToAnswer } from './generator';

const memory = { render: () => 'Step 1:\nAction: python {"code":"6*7"}\nResult: 42' };

function recordingModel(reply: string) {
  const prompts: string[] = [];
  const model: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'writer',
    async chat(request) {
      prompts.push(request.messages.map((message) => message.content).join('\n'));
      return { text: reply, finishReason: 'stop', model: 'writer' };
    },
  };
  return { model, prompts };
}

describe('createGenerator', () => {
  it('uses the finish input directly when configured', async () => {
    const { model, prompts } = recordingModel('unused');
    expect(await createGenerator({ model }).generate({ question: 'q', memory, finishInput: ' 42 ' })).toBe('42');
    expect(prompts).toHaveLength(0);
  });

  it('asks the model from memory without a finish input, or with a blank one, or when told to', async () => {
    const { model, prompts } = recordingModel('Final answer: 42');
    expect(await createGenerator({ model }).generate({ question: 'What is 6*7?', memory })).toBe('42');
    expect(await createGenerator({ model }).generate({ question: 'q', memory, finishInput: '  ' })).toBe('42');
    expect(await createGenerator({ model, useFinishInput: false }).generate({ question: 'q', memory, finishInput: '41' })).toBe('42');
    expect(prompts[0]).toContain('Question: What is 6*7?');
    expect(prompts[0]).toContain('Result: 42');
  });

  it('answers null with neither a finish input nor a model', async () => {
    expect(await createGenerator().generate({ question: 'q', memory })).toBeNull();
    expect(await createGenerator().generate({ question: 'q', memory, finishInput: '' })).toBeNull();
  });

  it('unwraps {answer} and serialises other finish objects', () => {
    expect(finishInputToAnswer({ answer: 42 })).toBe('42');
    expect(finishInputToAnswer({ value: 1 })).toBe('{"value":1}');
  });
});
