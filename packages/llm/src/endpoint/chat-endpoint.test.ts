import { afterEach, describe, expect, it, vi } from 'vitest';
import { type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '../testing/index';
import { chatEndpointSchema, createChatModel } from './chat-endpoint';

const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
const jsonSchema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

describe('chatEndpointSchema', () => {
  it('fills in the Ollama URL, the key variable and the response format', () => {
    expect(chatEndpointSchema.parse({ kind: 'ollama', model: 'qwen2.5:7b-instruct' })).toEqual({ kind: 'ollama', url: 'http://127.0.0.1:11434', model: 'qwen2.5:7b-instruct' });
    expect(chatEndpointSchema.parse({ kind: 'openai', baseUrl: 'https://api.deepseek.com/v1', model: 'deepseek-chat' })).toEqual({
      kind: 'openai',
      baseUrl: 'https://api.deepseek.com/v1',
      model: 'deepseek-chat',
      apiKeyEnv: 'OPENAI_API_KEY',
      responseFormat: 'json_schema',
    });
  });

  it('refuses unknown keys, an unknown kind and a URL that is not one', () => {
    expect(chatEndpointSchema.safeParse({ kind: 'ollama', model: 'm', baseUrl: 'http://x' }).success).toBe(false);
    expect(chatEndpointSchema.safeParse({ kind: 'anthropic', model: 'm' }).success).toBe(false);
    expect(chatEndpointSchema.safeParse({ kind: 'openai', baseUrl: 'not a url', model: 'm' }).success).toBe(false);
  });
});

describe('createChatModel', () => {
  const servers: LoopbackChatServer[] = [];
  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const server of servers.splice(0)) await server.close();
  });

  it('talks to Ollama at the endpoint URL with its model tag', async () => {
    const server = await startOllamaServer('qwen3:8b', () => '4');
    servers.push(server);
    const model = createChatModel(chatEndpointSchema.parse({ kind: 'ollama', url: server.url, model: 'qwen3:8b' }));
    expect((await model.chat({ messages })).text).toBe('4');
    expect(server.requests).toEqual([expect.objectContaining({ model: 'qwen3:8b', messages })]);
  });

  it('talks to an OpenAI-compatible API with the key of apiKeyEnv and the configured response format', async () => {
    const server = await startOpenAiCompatibleServer('deepseek-chat', 'sk-test', () => '{"answer":"4"}');
    servers.push(server);
    vi.stubEnv('AGENTFLOW_TEST_KEY', 'sk-test');
    const model = createChatModel(
      chatEndpointSchema.parse({ kind: 'openai', baseUrl: server.url, model: 'deepseek-chat', apiKeyEnv: 'AGENTFLOW_TEST_KEY', responseFormat: 'json_object' }),
    );
    expect((await model.chat({ messages, jsonSchema })).text).toBe('{"answer":"4"}');
    expect(server.requests).toEqual([expect.objectContaining({ model: 'deepseek-chat', response_format: { type: 'json_object' } })]);
  });
});
