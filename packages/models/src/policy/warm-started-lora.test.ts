import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PolicyBatch } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { saveModelFolder } from '../weights/model-folder';
import { createRandomModel } from '../weights/random-model';
import type { LocalPolicy } from './local-policy';
import { createWarmStartedLora, type WarmStartedLoraSettings } from './warm-started-lora';

const config = { ...getModelPreset('tiny'), hiddenSize: 32, intermediateSize: 48, headDim: 8 };
// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const batch: PolicyBatch = { promptIds: [[1, 2, 3], [4]], completionIds: [[5, 6], [7, 8, 9]] };

const maxGap = (left: number[][], right: number[][]) => Math.max(...left.flatMap((row, index) => row.map((value, token) => Math.abs(value - right[index]![token]!))));

/** A base folder and a warm start saved on it, with an adapter that moves the model (B != 0). */
async function warmStarted(trainedLora: WarmStartedLoraSettings['trainedLora']) {
  const root = mkdtempSync(join(tmpdir(), 'warm-started-'));
  const baseDir = join(root, 'base');
  await saveModelFolder(baseDir, createRandomModel(config, 3, { std: 0.2 }));
  const lora = createWarmStartedLora({
    baseDir,
    warmAdapterDir: join(root, 'checkpoints', 'warm'),
    mergedDir: join(root, 'models', 'warm-merged'),
    warmLora: { rank: 2, alpha: 4 },
    trainedLora,
    open: { seed: 1, runtime },
  });
  const warm = await lora.openWarm();
  for (const matrices of warm.policy.adapter.matrices.values()) matrices.b.fill(0.05);
  await warm.policy.save(join(root, 'checkpoints', 'warm'));
  return { root, lora, warm: warm.policy };
}

/** Moves the trained adapter away from where it started. */
function moveOn(policy: LocalPolicy): void {
  for (const matrices of policy.adapter.matrices.values()) matrices.b.fill(-0.05);
}

describe('createWarmStartedLora', () => {
  it('with a trained adapter of its own: merges the warm adapter once, atomically, and starts exactly at the warm policy', async () => {
    const { root, lora, warm } = await warmStarted({ rank: 2, alpha: 2 });
    const expected = await warm.logprobs(batch);
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    const trained = await lora.openTrained({ checkpoint: null });
    expect(trained.modelDir).toBe(join(root, 'models', 'warm-merged'));
    expect(lora.trainedBaseDir).toBe(trained.modelDir);
    expect(existsSync(join(root, 'models', 'warm-merged', 'config.json'))).toBe(true);
    expect(existsSync(join(root, 'models', 'warm-merged.partial'))).toBe(false);
    expect(trained.policy.adapter.config).toMatchObject({ rank: 2, alpha: 2 });
    // B = 0 on the merged warm planner: the warm policy's log-probs, up to float32 merging.
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeLessThan(1e-4);

    // The reference stays the warm policy while the trained adapter moves on.
    moveOn(trained.policy);
    const reference = await lora.warmReference(trained.policy);
    expect(maxGap(await reference.logprobs(batch), expected)).toBeLessThan(1e-4);
    expect(maxGap(await trained.policy.logprobs(batch), expected)).toBeGreaterThan(1e-3);

    // Written once: a later open (or the PRM's writeMergedWarm) keeps the folder as it is.
    const written = statSync(join(root, 'models', 'warm-merged', 'model.safetensors')).mtimeMs;
    expect(await lora.writeMergedWarm()).toBe(join(root, 'models', 'warm-merged'));
    expect(statSync(join(root, 'models', 'warm-merged', 'model.safetensors')).mtimeMs).toBe(written);
    await Promise.all([warm.release(), trained.policy.release()]);
  });

  it('without one: trains the warm adapter on, on the base, and reads the reference from the warm checkpoint', async () => {
    const { root, lora, warm } = await warmStarted(null);
    const expected = await warm.logprobs(batch);
    const trained = await lora.openTrained({ checkpoint: join(root, 'checkpoints', 'warm') });
    expect(trained.modelDir).toBe(join(root, 'base'));
    expect(lora.trainedBaseDir).toBe(join(root, 'base'));
    expect(await trained.policy.logprobs(batch)).toEqual(expected);
    moveOn(trained.policy);
    const reference = await lora.warmReference(trained.policy);
    expect(await reference.logprobs(batch)).toEqual(expected);
    expect(existsSync(join(root, 'models', 'warm-merged'))).toBe(false);
    await Promise.all([warm.release(), trained.policy.release()]);
  });
});
