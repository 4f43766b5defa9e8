import { AgentFlowError } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackServer, type RecordedRequest, readFixture, type ScriptedReply, startLoopbackServer } from '../testing/loopback-server';
import { createVllmServers } from './vllm-servers';

const completion = JSON.parse(readFixture('vllm-completion.json'));
const tokenizer = { encodeChat: () => [1, 2, 3], decode: (ids: readonly number[]) => ids.join(' ') };
const messages = [{ role: 'user' as const, content: 'Hi' }];
const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
const noWait = { sleep: async () => {}, random: () => 0 };

/** Answers as a vLLM server does: completions from the fixture (model = the requested name), adapter calls as told. */
function vllmLike(loadStatus = 200): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    const body = request.body as Record<string, unknown>;
    switch (request.path) {
      case '/v1/completions':
        return { kind: 'json', body: { ...completion, model: body.model } };
      case '/v1/load_lora_adapter':
        return loadStatus === 200
          ? { kind: 'raw', status: 200, text: `Success: LoRA adapter '${body.lora_name}' added successfully.` }
          : { kind: 'json', status: loadStatus, body: { object: 'error', message: `Loading lora ${body.lora_name} failed: No adapter found for ${body.lora_path}`, type: 'BadRequestError', code: loadStatus } };
      case '/v1/unload_lora_adapter':
        return { kind: 'json', status: 404, body: { object: 'error', message: `The lora adapter '${body.lora_name}' cannot be found.`, type: 'NotFoundError', code: 404 } };
      case '/v1/models':
        return { kind: 'json', body: { object: 'list', data: [{ id: 'planner', object: 'model', parent: null }, { id: 'planner-step3', object: 'model', parent: 'planner' }] } };
      default:
        return { kind: 'json', status: 404, body: { detail: 'Not Found' } };
    }
  };
}

describe('createVllmServers against loopback servers answering as vLLM', () => {
  let first: LoopbackServer;
  let second: LoopbackServer;
  beforeEach(async () => {
    first = await startLoopbackServer(vllmLike());
    second = await startLoopbackServer(vllmLike(400));
  });
  afterEach(async () => {
    await first.close();
    await second.close();
  });

  it('sends the prompt as token ids and reads the completion back as ids with log-probs', async () => {
    const servers = createVllmServers({ urls: [`${first.url}/v1`], model: 'planner', tokenizer, ...noWait });
    const response = await servers.languageModel.chat({ messages, jsonSchema: schema, temperature: 0.7, maxTokens: 40, seed: 5, stop: ['\n\n'] });
    expect(first.requests[0]?.path).toBe('/v1/completions');
    expect(first.requests[0]?.body).toEqual({
      model: 'planner',
      prompt: [1, 2, 3],
      max_tokens: 40,
      temperature: 0.7,
      seed: 5,
      stop: ['\n\n'],
      logprobs: 0,
      return_tokens_as_token_ids: true,
      return_token_ids: true,
      structured_outputs: { json: schema },
    });
    expect(response).toMatchObject({
      text: '{"a":1}',
      finishReason: 'stop',
      promptTokenIds: [1, 2, 3],
      completionTokenIds: [90, 64, 25, 16, 151645],
      completionLogprobs: [-0.01, -1.25, -0.5, -0.125, -0.03],
    });
    expect(response.policyVersion).toBeUndefined();
  });

  it('sends guided_json to older servers and names the adapter in use, recorded as the policy version', async () => {
    const servers = createVllmServers({ urls: [first.url], model: 'planner', guidedDecoding: 'guided_json', returnTokenIds: false, tokenizer, ...noWait });
    servers.useAdapter('planner-step3');
    const response = await servers.languageModel.chat({ messages, jsonSchema: schema });
    const body = first.requests[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ model: 'planner-step3', guided_json: schema, temperature: 1, max_tokens: 256 });
    expect(body).not.toHaveProperty('structured_outputs');
    expect(body).not.toHaveProperty('return_token_ids');
    expect(response.policyVersion).toBe('planner-step3');
    expect(response.model).toBe('planner-step3');
  });

  it('refuses a reply whose echoed prompt ids differ from those sent, or whose tokens are not ids', async () => {
    const servers = createVllmServers({ urls: [first.url], model: 'planner', tokenizer, maxRetries: 0, ...noWait });
    const choice = completion.choices[0];
    first.push({ kind: 'json', body: { ...completion, choices: [{ ...choice, prompt_token_ids: [1, 2, 4] }] } });
    const drift = await servers.languageModel.chat({ messages }).catch((error: unknown) => error);
    expect(AgentFlowError.hasCode(drift, 'SHAPE_MISMATCH')).toBe(true);
    expect((drift as Error).message).toContain('differ from the 3 ids sent, first at position 2; the trajectory would not be token-exact');
    first.push({ kind: 'json', body: { ...completion, choices: [{ ...choice, token_ids: null, logprobs: { ...choice.logprobs, tokens: ['{', 'a', '"', '1', '}'] } }] } });
    const text = await servers.languageModel.chat({ messages }).catch((error: unknown) => error);
    expect((text as Error).message).toContain('token 0 is "{", not "token_id:<id>"; the server ignored return_tokens_as_token_ids');
  });

  it('takes a server that fails to load the adapter out of rotation, and stops when none is left', async () => {
    const warnings: string[] = [];
    const servers = createVllmServers({ urls: [first.url, second.url], model: 'planner', tokenizer, warn: (line) => warnings.push(line), ...noWait });
    const report = await servers.loadAdapter('planner-step1', '/runs/r/adapters/step-1');
    expect(report.loaded).toEqual([first.url]);
    expect(report.failed).toEqual([{ url: second.url, reason: 'HTTP 400 (Loading lora planner-step1 failed: No adapter found for /runs/r/adapters/step-1)' }]);
    expect(second.requests[0]?.body).toEqual({ lora_name: 'planner-step1', lora_path: '/runs/r/adapters/step-1' });
    expect(warnings).toEqual([
      `vLLM server ${second.url} taken out of rotation: it failed to load adapter planner-step1 from /runs/r/adapters/step-1: HTTP 400 (Loading lora planner-step1 failed: No adapter found for /runs/r/adapters/step-1). 1 server(s) left: ${first.url}.`,
    ]);
    expect(servers.urls).toEqual([first.url]);
    servers.useAdapter('planner-step1');
    for (let call = 0; call < 3; call++) await servers.languageModel.chat({ messages });
    expect(second.requests.filter((request) => request.path === '/v1/completions')).toHaveLength(0);
    // An adapter the server does not have unloads without complaint.
    expect(await servers.unloadAdapter('planner-step0')).toEqual([]);
    expect(await servers.listAdapters(first.url)).toEqual(['planner-step3']);
    expect(() => servers.removeServer(first.url, 'it stopped answering')).toThrow(/No vLLM server is left in rotation: the last one, http:\/\/127\.0\.0\.1:\d+, failed \(it stopped answering\)/);
  });

  it('spreads completions over the servers in rotation', async () => {
    const servers = createVllmServers({ urls: [first.url, second.url], model: 'planner', tokenizer, ...noWait });
    for (let call = 0; call < 4; call++) await servers.languageModel.chat({ messages });
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(2);
  });
});
