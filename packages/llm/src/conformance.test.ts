import type { PolicyGeneration, PolicyGenerateRequest, TrainablePolicy } from '@agentflow/core';
import { createOllamaModel } from './ollama/ollama-model';
import { createOpenAICompatibleModel } from './openai/openai-compatible-model';
import { createPolicyModel } from './policy/policy-model';
import { describeLanguageModelConformance } from './testing/language-model-conformance';
import { ollamaReply, openAIReply, startLoopbackServer } from './testing/loopback-server';

describeLanguageModelConformance('Ollama /api/chat', async () => {
  const server = await startLoopbackServer();
  return {
    model: createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url] }),
    script: (text, finishReason) => server.push(ollamaReply(text, finishReason)),
    lastJsonSchema: () => (server.requests.at(-1)?.body as { format?: unknown } | undefined)?.format,
    close: () => server.close(),
  };
});

describeLanguageModelConformance('OpenAI-compatible /chat/completions', async () => {
  const server = await startLoopbackServer();
  return {
    model: createOpenAICompatibleModel({ model: 'gpt-4.1', endpoints: [server.url], apiKeyEnv: 'KEY', env: { KEY: 'k' } }),
    script: (text, finishReason) => server.push(openAIReply(text, finishReason)),
    lastJsonSchema: () =>
      (server.requests.at(-1)?.body as { response_format?: { json_schema: { schema: unknown } } } | undefined)
        ?.response_format?.json_schema.schema,
    close: () => server.close(),
  };
});

describeLanguageModelConformance('local policy', async () => {
  const replies: Array<{ text: string; finishReason: 'stop' | 'length' }> = [];
  let lastRequest: PolicyGenerateRequest | undefined;
  const policy: TrainablePolicy = {
    async generate(requests) {
      return requests.map((request): PolicyGeneration => {
        lastRequest = request;
        const reply = replies.shift() ?? { text: '', finishReason: 'stop' };
        const tokenIds = [...Buffer.from(reply.text)];
        return { tokenIds, text: reply.text, logprobs: tokenIds.map(() => -1), finishReason: reply.finishReason };
      });
    },
    logprobs: async () => [],
    accumulateGradients: async () => ({ loss: 0, tokens: 0 }),
    applyGradients: async () => ({ gradNorm: 0 }),
    save: async () => {},
    load: async () => {},
  };
  const tokenizer = {
    encodeChat: (messages: ReadonlyArray<{ content: string }>) => [...Buffer.from(messages.map((m) => m.content).join('\n'))],
    decode: (ids: readonly number[]) => Buffer.from(ids).toString('utf8'),
  };
  return {
    model: createPolicyModel({ policy, tokenizer }),
    script: (text, finishReason) => replies.push({ text, finishReason }),
    lastJsonSchema: () => lastRequest?.jsonSchema,
    close: async () => {},
  };
});
