import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { loadModel, saveModelFolder } from '../weights/model-folder';
import { createRandomModel } from '../weights/random-model';
import type { LocalPolicy } from './local-policy';
import type { OpenedPolicy } from './opened-policy';
import type { TrainableSet } from './trainable-set';
import type { TrainedPhaseTraining, WarmPhaseTraining } from './warm-started-phases';
import { createWarmStartedPolicy } from './warm-started-policy';

const config = { ...getModelPreset('tiny'), hiddenSize: 32, intermediateSize: 48, headDim: 8 };
// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const batch: PolicyBatch = { promptIds: [[1, 2, 3], [4]], completionIds: [[5, 6], [7, 8, 9]] };
const lora = { kind: 'lora' } as const;
const full = { kind: 'full' } as const;

const maxGap = (left: number[][], right: number[][]) => Math.max(...left.flatMap((row, index) => row.map((value, token) => Math.abs(value - right[index]![token]!))));

/** Moves what `policy` trains away from where it started: its adapter's B matrices, or every weight. */
function moveOn(policy: LocalPolicy<TrainableSet>, by: number): void {
  if (policy.adapter) for (const matrices of policy.adapter.matrices.values()) matrices.b.fill(by);
  else for (const tensor of policy.model.weights.values()) for (let index = 0; index < tensor.data.length; index += 7) tensor.data[index]! += by;
}

/** A base folder and a warm phase saved on it that moved the model (B != 0, or weights moved). */
async function warmStarted(warm: WarmPhaseTraining, trained: TrainedPhaseTraining) {
  const root = mkdtempSync(join(tmpdir(), 'warm-started-'));
  const baseDir = join(root, 'base');
  await saveModelFolder(baseDir, createRandomModel(config, 3, { std: 0.2 }));
  const phases = createWarmStartedPolicy({
    baseDir,
    warmDir: join(root, 'checkpoints', 'warm'),
    mergedDir: join(root, 'models', 'warm-merged'),
    warm,
    trained,
    open: { seed: 1, runtime },
  });
  const opened = await phases.openWarm();
  expect(opened.modelDir).toBe(baseDir);
  moveOn(opened.policy, 0.05);
  await opened.policy.save(join(root, 'checkpoints', 'warm'));
  return { root, phases, warm: opened.policy, expected: await opened.policy.logprobs(batch) };
}

const release = (...policies: Array<{ release(): Promise<void> } | OpenedPolicy>) => Promise.all(policies.map((item) => ('policy' in item ? item.policy : item).release()));

describe('createWarmStartedPolicy, LoRA in both phases (as before full training)', () => {
  it('with a trained adapter of its own: merges the warm adapter once, atomically, and starts exactly at the warm policy', async () => {
    const { root, phases, warm, expected } = await warmStarted({ trainable: lora, lora: { rank: 2, alpha: 4 } }, { trainable: lora, lora: { rank: 2, alpha: 2 } });
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    const trained = await phases.openTrained({ checkpoint: null });
    expect(trained.modelDir).toBe(join(root, 'models', 'warm-merged'));
    expect(phases.trainedBaseDir).toBe(trained.modelDir);
    expect(existsSync(join(root, 'models', 'warm-merged', 'config.json'))).toBe(true);
    expect(existsSync(join(root, 'models', 'warm-merged.partial'))).toBe(false);
    expect(trained.policy.adapter?.config).toMatchObject({ rank: 2, alpha: 2 });
    // B = 0 on the merged warm planner: the warm policy's log-probs, up to float32 merging.
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeLessThan(1e-4);

    // The reference stays the warm policy while the trained adapter moves on.
    moveOn(trained.policy, -0.05);
    const reference = await phases.warmReference(trained.policy);
    expect(maxGap(await reference.logprobs(batch), expected)).toBeLessThan(1e-4);
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeGreaterThan(1e-3);

    // Written once: a later open (or the PRM's writeMergedWarm) keeps the folder as it is.
    const written = statSync(join(root, 'models', 'warm-merged', 'model.safetensors')).mtimeMs;
    expect(await phases.writeMergedWarm()).toBe(join(root, 'models', 'warm-merged'));
    expect(statSync(join(root, 'models', 'warm-merged', 'model.safetensors')).mtimeMs).toBe(written);
    // vLLM's adapter: a PEFT folder on the merged warm model.
    await phases.saveAdapter(trained.policy, join(root, 'adapter'));
    expect(JSON.parse(readFileSync(join(root, 'adapter', 'adapter_config.json'), 'utf8')).base_model_name_or_path).toBe(resolve(root, 'models', 'warm-merged'));
    await release(warm, trained, reference);
  });

  it('without one: trains the warm adapter on, on the base, and reads the reference from the warm checkpoint', async () => {
    const { root, phases, warm, expected } = await warmStarted({ trainable: lora, lora: { rank: 2, alpha: 4 } }, { trainable: lora, lora: null });
    // By default the trained phase starts from the warm checkpoint (adapter and Adam moments).
    const trained = await phases.openTrained();
    expect(trained.modelDir).toBe(join(root, 'base'));
    expect(phases.trainedBaseDir).toBe(join(root, 'base'));
    expect(await trained.policy.logprobs(batch)).toEqual(expected);
    moveOn(trained.policy, -0.05);
    const reference = await phases.warmReference(trained.policy);
    expect(await reference.logprobs(batch)).toEqual(expected);
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    await release(warm, trained, reference);
  });
});

describe('createWarmStartedPolicy with full-parameter phases', () => {
  it('full -> full: the warm checkpoint is a model folder, the trained phase opens it whole, and the reference stays the warm model after a resume', async () => {
    const { root, phases, warm, expected } = await warmStarted({ trainable: full, lora: { rank: 2, alpha: 4 } }, { trainable: full, lora: null });
    const warmDir = join(root, 'checkpoints', 'warm');
    // A Hugging Face folder (weights, config, the base's tokenizer) with the optimiser beside it.
    for (const file of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'optimizer/optimizer.json']) expect(existsSync(join(warmDir, file)), file).toBe(true);
    expect((await loadModel(warmDir)).weights.size).toBe(warm.model.weights.size);
    // The warm model is its checkpoint: nothing is merged.
    expect(phases.trainedBaseDir).toBe(warmDir);
    expect(await phases.writeMergedWarm()).toBe(warmDir);
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    // Reopened from its checkpoint (a resumed warm start), the warm phase is where it was saved.
    const reopened = await phases.openWarm();
    expect(await reopened.policy.logprobs(batch)).toEqual(expected);

    const trained = await phases.openTrained();
    expect(trained.modelDir).toBe(warmDir);
    expect(trained.policy.adapter).toBeUndefined();
    expect(await trained.policy.logprobs(batch)).toEqual(expected);
    moveOn(trained.policy, -0.05);
    const moved = await trained.policy.logprobs(batch);
    expect(maxGap(moved, expected)).toBeGreaterThan(1e-3);
    await trained.policy.save(join(root, 'checkpoints', 'final'));
    await expect(phases.saveAdapter(trained.policy, join(root, 'adapter'))).rejects.toThrow(/no LoRA adapter/);

    // A resumed trained phase: its checkpoint's weights, and the reference is still the warm model.
    const resumed = await phases.openTrained({ checkpoint: join(root, 'checkpoints', 'final') });
    expect(await resumed.policy.logprobs(batch)).toEqual(moved);
    const reference = await phases.warmReference(resumed.policy);
    expect(maxGap(await reference.logprobs(batch), expected)).toBeLessThan(1e-6);
    await release(warm, reopened, trained, resumed, reference);
  });

  it('full -> LoRA: a fresh adapter on the warm model folder starts exactly at the warm policy', async () => {
    const { root, phases, warm, expected } = await warmStarted({ trainable: full, lora: { rank: 2, alpha: 4 } }, { trainable: lora, lora: { rank: 2, alpha: 2 } });
    const warmDir = join(root, 'checkpoints', 'warm');
    const trained = await phases.openTrained();
    expect(trained.modelDir).toBe(warmDir);
    expect(trained.policy.adapter?.config).toMatchObject({ rank: 2, alpha: 2 });
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeLessThan(1e-5);
    moveOn(trained.policy, -0.05);
    const reference = await phases.warmReference(trained.policy);
    expect(maxGap(await reference.logprobs(batch), expected)).toBeLessThan(1e-5);
    await phases.saveAdapter(trained.policy, join(root, 'adapter'));
    expect(JSON.parse(readFileSync(join(root, 'adapter', 'adapter_config.json'), 'utf8')).base_model_name_or_path).toBe(resolve(warmDir));
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    await release(warm, trained, reference);
  });

  it('full -> LoRA without an adapter of its own is refused: there is no warm adapter to train on', () => {
    let error: unknown;
    try {
      createWarmStartedPolicy({ baseDir: 'base', warmDir: 'warm', mergedDir: 'merged', warm: { trainable: full, lora: {} }, trained: { trainable: lora, lora: null }, open: {} });
    } catch (caught) {
      error = caught;
    }
    expect(AgentFlowError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toContain('leaves no adapter');
  });

  it('LoRA -> full: the trained phase trains every weight of the merged warm model, its reference loaded from that folder', async () => {
    const { root, phases, warm, expected } = await warmStarted({ trainable: lora, lora: { rank: 2, alpha: 4 } }, { trainable: { kind: 'full', frozen: ['model.embed_tokens.weight'] }, lora: null });
    const mergedDir = join(root, 'models', 'warm-merged');
    const trained = await phases.openTrained();
    expect(trained.modelDir).toBe(mergedDir);
    expect(phases.trainedBaseDir).toBe(mergedDir);
    expect(trained.policy.adapter).toBeUndefined();
    expect(trained.policy.trainedWeights).not.toContain('model.embed_tokens.weight');
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeLessThan(1e-4);
    moveOn(trained.policy, -0.05);
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeGreaterThan(1e-3);
    const reference = await phases.warmReference(trained.policy);
    expect(maxGap(await reference.logprobs(batch), expected)).toBeLessThan(1e-4);
    await release(warm, trained, reference);
  });
});
