import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModel, TrainablePolicy } from '@agentflow/core';
import { createLocalPolicy, type LocalPolicy, loadModel, loadTokenizer, type ModelTokenizer, saveLoraAdapter } from '@agentflow/models';
import { writeTinyQwen3Folder } from '@agentflow/models/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startVllmStandIn, type VllmStandIn } from '../testing/index';
import { createRolloutBackend, vllmStatePath } from './create-rollout-backend';
import { rolloutsSettingsSchema } from './rollouts-settings';

const messages = [{ role: 'user' as const, content: 'What is 2+2? Answer as JSON.' }];

describe('rolloutsSettingsSchema', () => {
  it('is local when unset, and fills in the vLLM defaults', () => {
    expect(rolloutsSettingsSchema.parse(undefined)).toEqual({ kind: 'local' });
    expect(rolloutsSettingsSchema.parse({ kind: 'vllm', urls: ['http://gpu1:8000'], model: 'planner-warm' })).toEqual({
      kind: 'vllm',
      urls: ['http://gpu1:8000'],
      model: 'planner-warm',
      adapterPrefix: 'agentflow',
      guidedDecoding: 'structured_outputs',
      concurrency: 16,
      timeoutMs: 120_000,
      maxMeanLogprobGap: 0.05,
      maxTokenLogprobGap: null,
    });
  });

  it('refuses no server, a prefix vLLM cannot name, and unknown keys', () => {
    const vllm = { kind: 'vllm', urls: ['http://gpu1:8000'], model: 'm' };
    expect(rolloutsSettingsSchema.safeParse({ ...vllm, urls: [] }).success).toBe(false);
    expect(rolloutsSettingsSchema.safeParse({ ...vllm, adapterPrefix: 'my run' }).success).toBe(false);
    expect(rolloutsSettingsSchema.safeParse({ kind: 'local', urls: ['http://gpu1:8000'] }).success).toBe(false);
  });
});

describe('createRolloutBackend', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentflow-rollout-backend-'));
  const modelDir = join(root, 'model');
  let tokenizer: ModelTokenizer;
  let policy: LocalPolicy;
  let servers: VllmStandIn[] = [];

  beforeAll(async () => {
    await writeTinyQwen3Folder(modelDir, { seed: 3 });
    tokenizer = await loadTokenizer(modelDir);
    policy = await createLocalPolicy({ model: await loadModel(modelDir), tokenizer, lora: { rank: 4, alpha: 8 }, device: 'cpu' });
  }, 120_000);
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
  });
  afterAll(async () => {
    await policy?.release();
  });

  it('local: rollouts from the policy\'s own chat model, the policy trained as it is', async () => {
    const languageModel = { id: 'policy' } as unknown as LanguageModel;
    const trained = { id: 'policy' } as unknown as TrainablePolicy;
    const rollouts = createRolloutBackend({
      rollouts: rolloutsSettingsSchema.parse(undefined),
      sampling: { maxNewTokens: 8, temperature: 1 },
      policy: trained,
      languageModel,
      tokenizer,
      saveAdapter: () => Promise.reject(new Error('no adapter is saved for local rollouts')),
      runRoot: join(root, 'local'),
      version: () => 0,
    });
    expect(rollouts.languageModel).toBe(languageModel);
    expect(rollouts.trainingPolicy).toBe(trained);
    await rollouts.prepare();
    expect(rollouts.stepMetrics()).toEqual({});
  });

  it('vllm: adapters under <runRoot>/adapters, the state in vllmStatePath, completions capped at maxNewTokens', async () => {
    servers = [await startVllmStandIn({ modelDir, servedModelName: 'tiny' })];
    const runRoot = join(root, 'vllm');
    const logged: string[] = [];
    const rollouts = createRolloutBackend({
      rollouts: rolloutsSettingsSchema.parse({ kind: 'vllm', urls: [servers[0]!.url], model: 'tiny', maxTokenLogprobGap: 1e-4 }),
      sampling: { maxNewTokens: 3, temperature: 1 },
      policy,
      languageModel: { id: 'unused' } as unknown as LanguageModel,
      tokenizer,
      saveAdapter: (path) => saveLoraAdapter(path, policy.adapter, modelDir),
      runRoot,
      version: () => 0,
      log: (message) => logged.push(message),
      warn: (message) => logged.push(`warn: ${message}`),
    });
    await rollouts.prepare();
    const reply = await rollouts.languageModel.chat({ messages, seed: 7 });
    expect(reply.policyVersion).toBe('agentflow-step0');
    expect(reply.completionTokenIds!.length).toBeLessThanOrEqual(3);
    expect(servers[0]!.adapters()).toEqual(['agentflow-step0']);
    expect(existsSync(join(runRoot, 'adapters', 'agentflow-step0', 'adapter_model.safetensors'))).toBe(true);
    expect(vllmStatePath(runRoot)).toBe(join(runRoot, 'vllm-adapters.json'));
    expect(JSON.parse(readFileSync(vllmStatePath(runRoot), 'utf8'))).toEqual({
      loaded: { version: 0, name: 'agentflow-step0', path: join(runRoot, 'adapters', 'agentflow-step0') },
    });
    expect(logged.length).toBeGreaterThan(0);
    await rollouts.trainingPolicy.logprobs({ promptIds: [reply.promptTokenIds!], completionIds: [reply.completionTokenIds!] });
    expect(rollouts.stepMetrics()).toMatchObject({ adapterVersion: 0, vllmServers: 1 });
  }, 120_000);
});
