import { AgentFlowError } from '@agentflow/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '../testing/index';
import { createChatModelFromSpec, parseChatModelSpec, parsePlannerSpec } from './model-spec';

const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];

describe('parseChatModelSpec', () => {
  it('reads ollama:MODEL and openai:MODEL, the model being everything after the first colon', () => {
    expect(parseChatModelSpec('--fixed-modules', 'ollama:qwen3:8b')).toEqual({ kind: 'ollama', model: 'qwen3:8b' });
    expect(parseChatModelSpec('--fixed-modules', 'openai:deepseek-chat')).toEqual({ kind: 'openai', model: 'deepseek-chat' });
  });

  it.each(['gpt4', 'local:/models/x', 'openai:', ':m'])('refuses %j, naming the option', (text) => {
    const error = (() => {
      try {
        parseChatModelSpec('--fixed-modules', text);
      } catch (caught) {
        return caught;
      }
    })();
    expect(AgentFlowError.isInstance(error) && error.code).toBe('INVALID_ARGUMENT');
    expect((error as Error).message).toBe(`--fixed-modules ${JSON.stringify(text)} is not one of ollama:MODEL or openai:MODEL (e.g. openai:deepseek-chat).`);
  });
});

describe('parsePlannerSpec', () => {
  it('reads ollama:MODEL, openai:MODEL and local:DIR', () => {
    expect(parsePlannerSpec('ollama:qwen3:8b')).toEqual({ kind: 'ollama', model: 'qwen3:8b' });
    expect(parsePlannerSpec('openai:deepseek-chat')).toEqual({ kind: 'openai', model: 'deepseek-chat' });
    expect(parsePlannerSpec('local:/models/planner')).toEqual({ kind: 'local', dir: '/models/planner' });
  });

  it.each(['gpt4', 'local:', 'hf:qwen'])('refuses %j with the accepted forms', (text) => {
    expect(() => parsePlannerSpec(text)).toThrow(`--planner ${JSON.stringify(text)} is not one of ollama:MODEL, openai:MODEL or local:DIR (e.g. ollama:qwen3:8b).`);
  });
});

describe('createChatModelFromSpec', () => {
  const servers: LoopbackChatServer[] = [];
  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const server of servers.splice(0)) await server.close();
  });

  it("opens the spec's model at the connection's URL", async () => {
    const ollama = await startOllamaServer('qwen3:8b', () => 'from ollama');
    const openai = await startOpenAiCompatibleServer('deepseek-chat', 'sk-test', () => 'from openai');
    servers.push(ollama, openai);
    vi.stubEnv('AGENTFLOW_SPEC_TEST_KEY', 'sk-test');
    const connection = { ollamaUrl: ollama.url, openaiBaseUrl: openai.url, apiKeyEnv: 'AGENTFLOW_SPEC_TEST_KEY', responseFormat: 'none' as const, concurrency: 1 };
    expect((await createChatModelFromSpec(parseChatModelSpec('--fixed-modules', 'ollama:qwen3:8b'), connection).chat({ messages })).text).toBe('from ollama');
    const model = createChatModelFromSpec({ kind: 'openai', model: 'deepseek-chat' }, connection);
    expect((await model.chat({ messages, jsonSchema: { type: 'object' } })).text).toBe('from openai');
    expect(openai.requests[0]).not.toHaveProperty('response_format');
  });

  it("sends no key with an empty apiKeyEnv (vLLM), so a server that wants one answers 401", async () => {
    const openai = await startOpenAiCompatibleServer('m', 'sk-test', () => '');
    servers.push(openai);
    const model = createChatModelFromSpec({ kind: 'openai', model: 'm' }, { ollamaUrl: 'http://127.0.0.1:1', openaiBaseUrl: openai.url, apiKeyEnv: '' });
    await expect(model.chat({ messages })).rejects.toThrow(/401/);
  });
});
