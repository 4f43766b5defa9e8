import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { createLocalPolicy, type LocalPolicy, loadModel, loadTokenizer, type ModelTokenizer, saveLoraAdapter } from '@agentflow/models';
import { perturbLoraAdapter, writeTinyQwen3Folder } from '@agentflow/models/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startVllmStandIn, type VllmStandIn } from '../testing/index';
import { createVllmRollouts } from './vllm-rollouts';

const messages = [{ role: 'user' as const, content: 'What is 2+2? Answer as JSON.' }];

describe('createVllmRollouts on two vLLM stand-ins', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentflow-vllm-rollouts-'));
  const modelDir = join(root, 'model');
  let tokenizer: ModelTokenizer;
  let policy: LocalPolicy;
  let servers: VllmStandIn[] = [];

  beforeAll(async () => {
    await writeTinyQwen3Folder(modelDir, { seed: 3 });
    tokenizer = await loadTokenizer(modelDir);
    policy = await createLocalPolicy({ model: await loadModel(modelDir), tokenizer, lora: { rank: 4, alpha: 8 }, device: 'cpu' });
    // A non-zero B, so that the adapter changes what the servers sample.
    perturbLoraAdapter(policy.adapter, { seed: 2 });
  }, 120_000);
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
  });
  afterAll(async () => {
    await policy?.release();
  });

  const rolloutsOver = async (run: string, step: { version: number }, limits: { maxMeanLogprobGap: number | null; maxTokenLogprobGap: number | null }) => {
    servers = [await startVllmStandIn({ modelDir, servedModelName: 'tiny' }), await startVllmStandIn({ modelDir, servedModelName: 'tiny' })];
    return createVllmRollouts({
      servers: { urls: servers.map((server) => server.url), model: 'tiny', tokenizer, warn: () => {} },
      policy,
      saveAdapter: (path) => saveLoraAdapter(path, policy.adapter, modelDir),
      adapterPrefix: 'run',
      adapterDir: join(run, 'adapters'),
      statePath: join(run, 'vllm-adapters.json'),
      version: () => step.version,
      ...limits,
    });
  };

  it("loads the step's adapter on every server before its rollouts, and measures the sampled log-probs against the policy's", async () => {
    const run = join(root, 'run');
    const step = { version: 0 };
    const rollouts = await rolloutsOver(run, step, { maxMeanLogprobGap: 0.05, maxTokenLogprobGap: 1e-4 });
    await rollouts.prepare();
    const reply = await rollouts.languageModel.chat({ messages, maxTokens: 8, seed: 7 });
    expect(reply.policyVersion).toBe('run-step0');
    for (const server of servers) expect(server.adapters()).toEqual(['run-step0']);
    expect(existsSync(join(run, 'adapters', 'run-step0', 'adapter_model.safetensors'))).toBe(true);
    expect(JSON.parse(readFileSync(join(run, 'vllm-adapters.json'), 'utf8'))).toEqual({
      loaded: { version: 0, name: 'run-step0', path: join(run, 'adapters', 'run-step0') },
    });

    await rollouts.trainingPolicy.logprobs({ promptIds: [reply.promptTokenIds!], completionIds: [reply.completionTokenIds!] });
    const metrics = rollouts.stepMetrics();
    expect(metrics).toMatchObject({ adapterVersion: 0, vllmServers: 2, logprobGapTokens: reply.completionTokenIds!.length });
    expect(metrics.logprobGapTokens).toBeGreaterThan(0);
    expect(metrics.logprobGapMax).toBeLessThan(1e-4);
    expect(rollouts.stepMetrics()).toEqual({ logprobGapMean: 0, logprobGapMax: 0, logprobGapTokens: 0, adapterVersion: -1, vllmServers: 2 });
  }, 120_000);

  it('stops before the update when the trained policy is not what the servers sampled with', async () => {
    const step = { version: 3 };
    const rollouts = await rolloutsOver(join(root, 'moved'), step, { maxMeanLogprobGap: null, maxTokenLogprobGap: 1e-4 });
    await rollouts.prepare();
    const reply = await rollouts.languageModel.chat({ messages, maxTokens: 8, seed: 7 });
    // The policy moves on without a new version reaching the servers.
    const matrices = [...policy.adapter.matrices.values()][0]!;
    const saved = matrices.b.slice();
    matrices.b.fill(0.5);
    try {
      const error = await rollouts.trainingPolicy
        .logprobs({ promptIds: [reply.promptTokenIds!], completionIds: [reply.completionTokenIds!] })
        .catch((caught: unknown) => caught);
      expect(AgentFlowError.hasCode(error, 'RUNTIME_ERROR')).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`^The log-probs the vLLM servers \\(${servers.map((server) => server.url).join(', ')}\\) sampled with and ONNX Runtime's recomputed old log-probs disagree`),
      );
    } finally {
      matrices.b.set(saved);
    }
  }, 120_000);
});
