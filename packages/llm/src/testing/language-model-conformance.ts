import { AgentFlowError, type LanguageModel } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateObject } from '../structured/generate-object';

/** One implementation under the shared suite: a model whose next replies the suite scripts. */
export interface ConformanceSubject {
  model: LanguageModel;
  /** Makes the model's next reply this text, ending for this reason. */
  script(text: string, finishReason: 'stop' | 'length'): void;
  /** The JSON schema the back end received with the last request, if it can be observed. */
  lastJsonSchema(): unknown;
  close(): Promise<void>;
}

/**
 * The behaviour every `LanguageModel` in AgentFlow shares (test support, not exported):
 * each implementation runs this suite with its own way of scripting replies.
 */
export function describeLanguageModelConformance(name: string, create: () => Promise<ConformanceSubject>): void {
  describe(`LanguageModel conformance: ${name}`, () => {
    let subject: ConformanceSubject;
    beforeEach(async () => {
      subject = await create();
    });
    afterEach(async () => subject.close());

    it('identifies itself as a v1 model', () => {
      expect(subject.model.specificationVersion).toBe('v1');
      expect(subject.model.provider).toMatch(/^\w+$/);
      expect(subject.model.modelId.length).toBeGreaterThan(0);
    });

    it('returns the text and says whether the token limit cut it', async () => {
      subject.script('{"a": 1}', 'stop');
      subject.script('{"a": ', 'length');
      const messages = [{ role: 'user' as const, content: 'hi' }];
      expect(await subject.model.chat({ messages })).toMatchObject({ text: '{"a": 1}', finishReason: 'stop' });
      expect(await subject.model.chat({ messages, maxTokens: 3 })).toMatchObject({ text: '{"a": ', finishReason: 'length' });
    });

    it('passes the JSON schema on and serves generateObject', async () => {
      subject.script('{"answer": 42}', 'stop');
      const result = await generateObject(subject.model, z.object({ answer: z.number() }), [
        { role: 'user', content: 'What is 6*7?' },
      ]);
      expect(result.ok && result.value).toEqual({ answer: 42 });
      expect(subject.lastJsonSchema()).toMatchObject({ type: 'object', required: ['answer'] });
    });

    it('rejects with ABORTED when the signal is already aborted', async () => {
      subject.script('never read', 'stop');
      const controller = new AbortController();
      controller.abort();
      const error = await subject.model
        .chat({ messages: [{ role: 'user', content: 'hi' }], signal: controller.signal })
        .catch((caught: unknown) => caught);
      expect(AgentFlowError.hasCode(error, 'ABORTED')).toBe(true);
    });
  });
}
