import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@agentflow/core';
import { createGenerator, runFlow } from '@agentflow/flow';
import { createVllmServers } from '@agentflow/llm';
import { startVllmStandIn, type VllmStandIn } from '@agentflow/llm/testing';
import { createLocalPolicy, createLoraAdapter, type LocalPolicy, loadModel, loadTokenizer, type ModelTokenizer, saveLoraAdapter } from '@agentflow/models';
import { perturbLoraAdapter, writeTinyQwen3Folder } from '@agentflow/models/testing';
import { createCompactPromptTemplate, createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const maxGap = (left: readonly number[], right: readonly number[]) => Math.max(...left.map((value, index) => Math.abs(value - right[index]!)));

describe('the agent loop over vLLM (the stand-in of @agentflow/llm/testing)', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentflow-vllm-loop-'));
  const modelDir = join(root, 'model');
  const adapterDir = join(root, 'adapter-v1');
  let standIn: VllmStandIn;
  let tokenizer: ModelTokenizer;
  let tuned: LocalPolicy;

  beforeAll(async () => {
    await writeTinyQwen3Folder(modelDir, { seed: 3 });
    const model = await loadModel(modelDir);
    tokenizer = await loadTokenizer(modelDir);
    // An adapter with non-zero B, so that it changes what the model samples.
    const adapter = createLoraAdapter(model.config, { rank: 4, alpha: 8 }, 1);
    perturbLoraAdapter(adapter, { seed: 2 });
    await saveLoraAdapter(adapterDir, adapter, modelDir);
    tuned = await createLocalPolicy({ model, tokenizer, adapter, device: 'cpu' });
    standIn = await startVllmStandIn({ modelDir, servedModelName: 'tiny', maxLoraRank: 8 });
  }, 120_000);
  afterAll(async () => {
    await standIn?.close();
    await tuned?.release();
  });

  it('gives the agent loop trajectories whose steps hold the exact ids, log-probs and adapter version', async () => {
    const servers = createVllmServers({ urls: [standIn.url], model: 'tiny', tokenizer, warn: () => {} });
    await servers.loadAdapter('tiny-flow', adapterDir);
    servers.useAdapter('tiny-flow');
    const echo: Tool<{ text: string }> = {
      name: 'echo',
      description: 'Repeats its input.',
      inputSchema: z.object({ text: z.string() }),
      execute: async (input) => ({ output: input.text, truncated: false, durationMs: 0 }),
    };
    const planner = createPlanner({ model: servers.languageModel, tools: [echo], template: createCompactPromptTemplate(), actionSchemaStyle: 'tied', maxRepairs: 0, maxTokens: 96, seed: 3 });
    const trajectory = await runFlow('Echo hello.', { planner, tools: [echo], verifier: createVerifier({ rules: { maxSteps: 2 } }), generator: createGenerator({ useFinishInput: true }) }, { maxSteps: 2 });
    expect(trajectory.steps.length, JSON.stringify(trajectory).slice(0, 600)).toBeGreaterThan(0);
    for (const step of trajectory.steps) {
      expect(step.policyVersion).toBe('tiny-flow');
      // The recorded prompt renders to exactly the ids that were sent.
      expect(step.promptTokenIds).toEqual(tokenizer.encodeChat(step.prompt));
      const [recomputed] = await tuned.logprobs({ promptIds: [step.promptTokenIds!], completionIds: [step.completionTokenIds!] });
      expect(maxGap(recomputed!, step.completionLogprobs!)).toBeLessThan(1e-4);
    }
    await servers.unloadAdapter('tiny-flow');
  }, 120_000);
});
