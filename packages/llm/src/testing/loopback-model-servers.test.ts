import { afterEach, describe, expect, it } from 'vitest';
import { createOllamaModel } from '../ollama/ollama-model';
import { createOpenAICompatibleModel } from '../openai/openai-compatible-model';
import { type LoopbackChatServer, startHeldOllamaServer, startOllamaServer, startOpenAiCompatibleServer } from './index';

const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];

describe('the loopback chat servers, through the HTTP back ends', () => {
  const servers: LoopbackChatServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('answers createOllamaModel as Ollama does and records the request', async () => {
    const server = await startOllamaServer('qwen3:8b', (body) => `${body.messages.length} message(s)`);
    servers.push(server);
    const model = createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url] });
    expect(await model.chat({ messages })).toMatchObject({ text: '1 message(s)', finishReason: 'stop' });
    expect(server.requests).toEqual([expect.objectContaining({ model: 'qwen3:8b', messages })]);
  });

  it('holds a reply until the test lets it go', async () => {
    let release: (text: string) => void = () => {};
    const server = await startHeldOllamaServer('m', () => new Promise<string>((resolve) => (release = resolve)));
    servers.push(server);
    const reply = createOllamaModel({ model: 'm', endpoints: [server.url] }).chat({ messages });
    await expect.poll(() => server.requests.length).toBe(1);
    release('4');
    expect((await reply).text).toBe('4');
  });

  it('answers createOpenAICompatibleModel as DeepSeek does, and refuses a wrong API key with 401', async () => {
    const server = await startOpenAiCompatibleServer('deepseek-chat', 'sk-test', () => '4');
    servers.push(server);
    const model = createOpenAICompatibleModel({ model: 'deepseek-chat', endpoints: [server.url], apiKeyEnv: 'KEY', env: { KEY: 'sk-test' } });
    expect(await model.chat({ messages })).toMatchObject({ text: '4', finishReason: 'stop' });
    const wrong = createOpenAICompatibleModel({ model: 'deepseek-chat', endpoints: [server.url], apiKeyEnv: 'KEY', env: { KEY: 'sk-wrong' }, maxRetries: 0 });
    await expect(wrong.chat({ messages })).rejects.toThrow(/401/);
    expect(server.requests).toHaveLength(1);
  });
});
