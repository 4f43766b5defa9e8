import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyTrainingBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { createRandomModel, type Qwen3Model } from '../weights/random-model';
import { createLocalPolicy } from './local-policy';

// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const config = { ...getModelPreset('tiny'), vocabSize: 64, hiddenSize: 32, intermediateSize: 48, headDim: 8, eosTokenIds: [63], tieWordEmbeddings: false };
const full = { kind: 'full' } as const;
const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
/** Lets the child process run TypeScript sources (one set of hooks for every package's tests). */
const registerTypescript = fileURLToPath(new URL('../../../../tools/typescript-hooks/register-typescript.mjs', import.meta.url));
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3], [4, 5]],
  completionIds: [[6, 7, 8], [9, 10]],
  tokenWeights: [[0.2, 0.2, 0.2], [0.2, 0.2]],
  objective: { kind: 'nll' },
};

const snapshot = (model: Qwen3Model) => new Map([...model.weights].map(([name, tensor]) => [name, tensor.data.slice()]));
const maxDifference = (a: number[][], b: number[][]) => Math.max(...a.flatMap((row, r) => row.map((value, t) => Math.abs(value - b[r]![t]!))));

/** Log-probs of `batch` from a model folder, computed by a fresh Node process (its own import of the package). */
function logprobsInFreshProcess(dir: string): number[][] {
  const child = spawnSync(
    process.execPath,
    ['--import', registerTypescript, join(fixtures, 'score-model-folder.ts'), dir, JSON.stringify(batch)],
    { encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`the fresh process failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as number[][];
}

describe('createLocalPolicy with trainable: full', () => {
  it('trains the base weights in place; save -> a fresh process reproduces the log-probs; load with or without the optimiser', async () => {
    const model = createRandomModel(config, 3, { std: 0.2 });
    const policy = await createLocalPolicy({ model, trainable: full, runtime });
    expect(policy.adapter).toBeUndefined();
    expect(policy.trainedWeights).toEqual([...model.weights.keys()]);
    const losses: number[] = [];
    for (let step = 0; step < 6; step++) {
      losses.push((await policy.accumulateGradients(batch)).loss);
      expect((await policy.applyGradients({ learningRate: 0.01, maxGradNorm: 1 })).gradNorm).toBeGreaterThan(0);
    }
    expect(losses.at(-1)!).toBeLessThan(losses[0]! * 0.7);
    const after = await policy.logprobs(batch);

    const dir = mkdtempSync(join(tmpdir(), 'full-policy-'));
    folders.push(dir);
    await policy.save(join(dir, 'checkpoint'));
    // The model folder's top level holds what loaders read; the optimiser is in its subfolder.
    expect(readdirSync(join(dir, 'checkpoint')).filter((file) => file.endsWith('.safetensors'))).toEqual(['model.safetensors']);
    expect(readdirSync(join(dir, 'checkpoint', 'optimizer')).sort()).toEqual(['optimizer.json', 'optimizer.safetensors']);
    expect(maxDifference(logprobsInFreshProcess(join(dir, 'checkpoint')), after)).toBeLessThan(1e-5);
    // Saving again over the same folder replaces it (the model folder is written whole).
    await policy.save(join(dir, 'checkpoint'));

    // Resumed (optimiser restored) and restarted (fresh optimiser) from the checkpoint, over other weights.
    const resumed = await createLocalPolicy({ model: createRandomModel(config, 8), trainable: full, runtime });
    await resumed.load(join(dir, 'checkpoint'));
    expect(maxDifference(await resumed.logprobs(batch), after)).toBeLessThan(1e-6);
    const restarted = await createLocalPolicy({ model: createRandomModel(config, 9), trainable: full, runtime });
    await restarted.load(join(dir, 'checkpoint'), { optimizerState: false });
    for (const each of [policy, resumed, restarted]) {
      await each.accumulateGradients(batch);
      await each.applyGradients({ learningRate: 0.01, maxGradNorm: 1 });
    }
    const weights = snapshot(policy.model);
    expect(snapshot(resumed.model)).toEqual(weights);
    // A fresh AdamW's first step moves every weight by about the learning rate, unlike the restored one.
    const query = 'model.layers.0.self_attn.q_proj.weight';
    expect(restarted.model.weights.get(query)!.data).not.toEqual(weights.get(query));

    // A folder of another model is refused, naming what differs; the policy's weights are untouched.
    const tied = await createLocalPolicy({ model: createRandomModel({ ...config, tieWordEmbeddings: true }, 4), trainable: full, runtime });
    const tiedWeights = snapshot(tied.model);
    await expect(tied.load(join(dir, 'checkpoint'))).rejects.toThrow(/lm_head\.weight is not a weight of this model/);
    expect(snapshot(tied.model)).toEqual(tiedWeights);
    for (const each of [policy, resumed, restarted, tied]) await each.release();
  });

  it('frozen() serves a copy of the weights at the call: old log-probs after an update changed the live ones', async () => {
    const policy = await createLocalPolicy({ model: createRandomModel(config, 5, { std: 0.2 }), trainable: full, runtime });
    const before = await policy.logprobs(batch);
    const start = policy.frozen();
    await policy.accumulateGradients(batch);
    await policy.applyGradients({ learningRate: 0.01 });
    const moved = await policy.logprobs(batch);
    expect(maxDifference(moved, before)).toBeGreaterThan(1e-3);
    expect(maxDifference(await start.logprobs(batch), before)).toBeLessThan(1e-6);
    // A later call copies the weights as they are then.
    expect(maxDifference(await policy.frozen().logprobs(batch), moved)).toBeLessThan(1e-6);
    expect(() => policy.frozen(createLoraAdapter(config, parseLoraSettings({ rank: 2, alpha: 2 })))).toThrow(/feeds no LoRA adapter/);
    await policy.release();
  });

  it('frozen patterns keep their weights as they are; norms get no weight decay', async () => {
    const model = createRandomModel(config, 6, { std: 0.2, normNoise: 0.1 });
    const frozen = ['model.embed_tokens.weight', 'model.layers.*.mlp.*'];
    const policy = await createLocalPolicy({ model, trainable: { kind: 'full', frozen }, weightDecay: 0.1, runtime });
    const isFrozen = (name: string) => name === 'model.embed_tokens.weight' || /^model\.layers\.\d+\.mlp\./.test(name);
    expect(policy.trainedWeights).toEqual([...model.weights.keys()].filter((name) => !isFrozen(name)));
    expect(policy.trainedWeights).toContain('lm_head.weight');
    // With every token weight 0 the gradients are 0 and, on the first step (no momentum yet), only
    // the decay moves a weight: the matrices shrink by (1 - lr * decay), the norms do not move.
    const decayed = snapshot(model);
    await policy.accumulateGradients({ ...batch, tokenWeights: batch.tokenWeights.map((row) => row.map(() => 0)) });
    await policy.applyGradients({ learningRate: 0.01 });
    for (const name of policy.trainedWeights) {
      const now = model.weights.get(name)!.data;
      const was = decayed.get(name)!;
      if (name.endsWith('norm.weight')) expect(now, name).toEqual(was);
      else expect(Math.max(...now.map((value, index) => Math.abs(value - was[index]! * (1 - 0.01 * 0.1)))), name).toBeLessThan(1e-7);
    }

    const start = snapshot(model);
    await policy.accumulateGradients(batch);
    await policy.applyGradients({ learningRate: 0.01 });
    for (const [name, tensor] of model.weights) {
      if (isFrozen(name)) expect(tensor.data, name).toEqual(start.get(name));
      else expect(tensor.data, name).not.toEqual(start.get(name));
    }
    await policy.release();
  });

  it('refuses a frozen pattern that matches nothing, freezing everything, and LoRA settings', async () => {
    const model = createRandomModel(config, 7);
    await expect(createLocalPolicy({ model, trainable: { kind: 'full', frozen: ['model.layers.*.mlp.bias'] }, runtime })).rejects.toThrow(
      /frozen pattern "model\.layers\.\*\.mlp\.bias" matches no weight/,
    );
    await expect(createLocalPolicy({ model, trainable: { kind: 'full', frozen: ['*'] }, runtime })).rejects.toThrow(/freeze every weight/);
    await expect(createLocalPolicy({ model, trainable: full, lora: { rank: 2, alpha: 2 }, runtime })).rejects.toThrow(/`lora` is set/);
  });
});
