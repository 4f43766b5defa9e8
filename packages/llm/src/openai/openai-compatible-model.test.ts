import { AgentFlowError } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackServer, openAIReply, readFixture, startLoopbackServer } from '../testing/loopback-server';
import { createOpenAICompatibleModel } from './openai-compatible-model';

const messages = [
  { role: 'system' as const, content: 'Answer in JSON.' },
  { role: 'user' as const, content: 'Hi' },
  { role: 'tool' as const, content: 'python printed 4' },
];
const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
const noWait = { sleep: async () => {}, random: () => 0 };

describe('createOpenAICompatibleModel against a loopback server', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  it('sends chat/completions with response_format json_schema and the key from the named variable', async () => {
    server.push(openAIReply('{"answer":"4"}'));
    const model = createOpenAICompatibleModel({
      model: 'gpt-4.1',
      endpoints: [`${server.url}/v1`],
      apiKeyEnv: 'TEST_OPENAI_KEY',
      env: { TEST_OPENAI_KEY: 'sk-test-123' },
      strictSchema: true,
      schemaName: 'planner_action',
    });
    const response = await model.chat({ messages, jsonSchema: schema, temperature: 0, maxTokens: 100, seed: 1 });
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test-123');
    expect(request?.body).toEqual({
      model: 'gpt-4.1',
      messages: [messages[0], messages[1], { role: 'user', content: 'python printed 4' }],
      temperature: 0,
      seed: 1,
      max_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'planner_action', schema, strict: true } },
    });
    expect(response).toEqual({
      text: '{"answer":"4"}',
      finishReason: 'stop',
      model: 'gpt-4.1-2025-04-14',
      usage: { promptTokens: 19, completionTokens: 10 },
    });
  });

  it('says which variable to set when the API key is missing', () => {
    const create = () =>
      createOpenAICompatibleModel({ model: 'deepseek-chat', apiKeyEnv: 'DEEPSEEK_API_KEY', env: {} });
    expect(create).toThrow(/DEEPSEEK_API_KEY is not set/);
    try {
      create();
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'INVALID_CONFIG')).toBe(true);
    }
  });

  it('sends no Authorization header without apiKeyEnv, and json_object for DeepSeek-style servers', async () => {
    server.push(openAIReply('{"answer":"x"}', 'length'));
    const model = createOpenAICompatibleModel({
      model: 'm',
      endpoints: [server.url],
      responseFormat: 'json_object',
      maxTokensField: 'max_completion_tokens',
    });
    const response = await model.chat({ messages, jsonSchema: schema, maxTokens: 9 });
    expect((server.requests[0]!.body as { max_completion_tokens: number }).max_completion_tokens).toBe(9);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect((server.requests[0]!.body as { response_format: unknown }).response_format).toEqual({ type: 'json_object' });
    expect(response.finishReason).toBe('length');
  });

  it('retries the documented 429 rate-limit error, then reports its message and status', async () => {
    const rateLimited = { kind: 'raw' as const, status: 429, text: readFixture('openai-rate-limit-error.json') };
    server.push({ ...rateLimited, headers: { 'retry-after': '1' } }, openAIReply('{"answer":"ok"}'));
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [server.url], ...noWait });
    expect((await model.chat({ messages })).text).toBe('{"answer":"ok"}');

    server.push(rateLimited, rateLimited);
    const failing = createOpenAICompatibleModel({ model: 'm', endpoints: [server.url], maxRetries: 1, ...noWait });
    await expect(failing.chat({ messages })).rejects.toThrow(
      new RegExp(`POST ${server.url}/chat/completions failed after 2 attempt.*HTTP 429 \\(Rate limit reached`),
    );
  });

  it('fails clearly on a 401 without retrying', async () => {
    server.push({
      kind: 'json',
      status: 401,
      body: { error: { message: 'Incorrect API key provided: sk-bad.', type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [server.url], ...noWait });
    await expect(model.chat({ messages })).rejects.toThrow(/HTTP 401: Incorrect API key provided/);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a truncated completion body', async () => {
    const full = JSON.stringify((openAIReply('{"answer":"ok"}') as { body: unknown }).body);
    server.push({ kind: 'truncate', text: full }, openAIReply('{"answer":"ok"}'));
    const model = createOpenAICompatibleModel({ model: 'm', endpoints: [server.url], ...noWait });
    expect((await model.chat({ messages })).text).toBe('{"answer":"ok"}');
    expect(server.requests).toHaveLength(2);
  });
});
