import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import type { PolicyObjectiveGraph } from '../graph/policy-training-graph';
import { loadLoraAdapter } from '../lora/peft-format';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
import { createRandomModel } from '../weights/random-model';
import { createLocalPolicy } from './local-policy';

const config = { ...getModelPreset('tiny'), hiddenSize: 32, intermediateSize: 48, headDim: 8 };
const model = createRandomModel(config, 3, { std: 0.2 });
// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });

describe('createLocalPolicy', () => {
  it('learns a demonstration with the built-in nll objective, and saves/loads its adapter', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-'));
    writeTokenizerFiles(join(dir, 'tok'));
    const tokenizer = await loadTokenizer(join(dir, 'tok'));
    const policy = await createLocalPolicy({ model, tokenizer, lora: { rank: 4, alpha: 8 }, seed: 1, runtime });
    const promptIds = tokenizer.encodeChat([{ role: 'user', content: 'hi' }]);
    const completionIds = [...tokenizer.encode('{"a":1}'), 258];
    const batch: PolicyTrainingBatch = {
      promptIds: [promptIds],
      completionIds: [completionIds],
      tokenWeights: [completionIds.map(() => 1 / completionIds.length)],
      objective: { kind: 'nll' },
    };
    const before = (await policy.logprobs(batch))[0]!;
    let firstLoss = 0;
    let lastLoss = 0;
    for (let step = 0; step < 15; step++) {
      const stats = await policy.accumulateGradients(batch);
      if (step === 0) firstLoss = stats.loss;
      lastLoss = stats.loss;
      const { gradNorm } = await policy.applyGradients({ learningRate: 0.02, maxGradNorm: 1 });
      expect(gradNorm).toBeGreaterThan(0);
    }
    expect(lastLoss).toBeLessThan(firstLoss * 0.5);
    const after = (await policy.logprobs(batch))[0]!;
    expect(after.reduce((a, b) => a + b)).toBeGreaterThan(before.reduce((a, b) => a + b));
    const [greedy] = await policy.generate([{ promptIds, maxTokens: completionIds.length + 2, temperature: 0 }]);
    expect(greedy!.tokenIds).toEqual(completionIds);
    expect(greedy!.text).toBe('{"a":1}');
    expect(greedy!.finishReason).toBe('stop');

    await policy.save(join(dir, 'adapter'));
    expect(readdirSync(join(dir, 'adapter')).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'optimizer.json', 'optimizer.safetensors']);
    const saved = await loadLoraAdapter(join(dir, 'adapter'), config);
    const fresh = await createLocalPolicy({ model, tokenizer, lora: { rank: 4, alpha: 8 }, seed: 2, runtime });
    expect((await fresh.logprobs(batch))[0]).not.toEqual(after);
    await fresh.load(join(dir, 'adapter'));
    expect((await fresh.logprobs(batch))[0]).toEqual(after);
    expect(fresh.adapter.matrices.get('model.layers.0.self_attn.q_proj')!.b).toEqual(saved.matrices.get('model.layers.0.self_attn.q_proj')!.b);
    await policy.release();
    await fresh.release();
  });

  it('trains with a pluggable objective that declares its own per-token inputs and metrics', async () => {
    // Advantage-weighted log-likelihood: loss = -sum(w * A * logp); metric: mean entropy.
    const weighted: PolicyObjectiveGraph = {
      kind: 'clipped-surrogate',
      build(graph, tensors) {
        const advantages = tensors.perToken('advantages');
        const weights = graph.mul(tensors.tokenWeights, tensors.mask);
        return {
          loss: graph.neg(graph.reduceSum(graph.mul(graph.mul(weights, advantages), tensors.logprobs), [0, 1])),
          metrics: { entropy: graph.div(graph.reduceSum(graph.mul(tensors.entropy(), tensors.mask), [0, 1]), graph.reduceSum(tensors.mask, [0, 1])) },
        };
      },
    };
    const policy = await createLocalPolicy({ model, lora: { rank: 2, alpha: 2, targetModules: ['v_proj'] }, objectives: [weighted], runtime });
    const batch: PolicyTrainingBatch = {
      promptIds: [[1, 2], [3]],
      completionIds: [[4, 5], [6]],
      tokenWeights: [[0.5, 0.5], [1]],
      advantages: [[1, 1], [-1]],
      objective: { kind: 'clipped-surrogate', epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 },
    };
    const stats = await policy.accumulateGradients(batch);
    const logprobs = await policy.logprobs(batch);
    const expected = -(0.5 * logprobs[0]![0]! + 0.5 * logprobs[0]![1]! - logprobs[1]![0]!);
    expect(Math.abs(stats.loss - expected)).toBeLessThan(1e-4);
    expect(stats.entropy).toBeGreaterThan(0);
    expect(stats.tokens).toBe(3);
    await expect(policy.accumulateGradients({ ...batch, advantages: undefined })).rejects.toThrow(/needs advantages/);
    await policy.release();
  });
});

describe('createLocalPolicy with rowBlocks', () => {
  it('trains its step in blocks of rows with the loss and gradient norm of the whole step, LoRA and in full', async () => {
    const promptIds = [[5, 6, 7, 8, 9]];
    const completionIds = [[10, 11, 12, 13]];
    const batch: PolicyTrainingBatch = { promptIds, completionIds, tokenWeights: [[0.25, 0.25, 0.25, 0.25]], objective: { kind: 'nll' } };
    for (const trainable of [{ kind: 'lora' as const }, { kind: 'full' as const, frozen: [] }]) {
      const step = async (rowBlocks?: { blockSize: number }) => {
        const adapter = trainable.kind === 'lora' ? { lora: { rank: 4, alpha: 8 } } : {};
        const policy = await createLocalPolicy({ model, trainable, ...adapter, seed: 1, runtime, ...(rowBlocks ? { rowBlocks } : {}) });
        const { loss } = await policy.accumulateGradients(batch);
        const { gradNorm } = await policy.applyGradients({ learningRate: 0, maxGradNorm: 1e9 });
        await policy.release();
        return { loss, gradNorm };
      };
      // Blocks of 3 over 9-token rows: the last block is padded.
      const [whole, blocked] = [await step(), await step({ blockSize: 3 })];
      expect(blocked.loss).toBeCloseTo(whole.loss, 5);
      expect(blocked.gradNorm / whole.gradNorm).toBeCloseTo(1, 4);
      // The setting reaches the step's graph: a block of no rows is refused when it is built.
      await expect(step({ blockSize: 0 })).rejects.toThrow(/blockSize must be a positive integer/);
    }
  });
});
