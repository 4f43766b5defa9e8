import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@agentflow/core';
import { type LocalPolicy, type PolicyObjectiveGraph, createLocalPolicy, } from '@agentflow/models';
import { afterAll, describe, expect, it } from 'vitest';
import type { DapoConfigInput } from '../config/dapo-config';
import { clippedSurrogateObjective } from '../graph/clipped-surrogate-graph';
import { createDapoTrainer } from './dapo-trainer';
import type { DapoStepMetrics } from './step-metrics';
import { type Prompt, prompts, rollouts, successRate, twoActionModel } from './two-action-task.test-helper';

// Compile-time check that the graph objective plugs into the models' training graph.
const objective: PolicyObjectiveGraph = clippedSurrogateObjective;

const config: DapoConfigInput = {
  groupSize: 8,
  promptsPerBatch: 4,
  promptsPerMiniBatch: 2,
  learningRate: 0.002,
  warmupSteps: 0,
  totalSteps: 20,
  checkpointEvery: 2,
  dynamicSampling: { kind: 'refill', maxRounds: 30 },
};

async function createPolicy(): Promise<LocalPolicy> {
  return createLocalPolicy({ model: twoActionModel(), device: 'cpu', eosTokenIds: [], lora: { rank: 4, alpha: 8 }, seed: 3, objectives: [objective] });
}

function createTrainer(policy: LocalPolicy, settings: { checkpointDir?: string; onMetrics?: (metrics: DapoStepMetrics) => void } = {}) {
  return createDapoTrainer<Prompt>({
    config,
    policy,
    prompts,
    sampleRollouts: rollouts(policy),
    scoreOutcome: (prompt, trajectory) => {
      const correct = trajectory.steps[0]?.completionTokenIds?.[0] === prompt.correct;
      return { reward: correct ? 1 : 0, correct };
    },
    random: createRandom(5),
    ...settings,
  });
}

const adapterOf = (policy: LocalPolicy) => [...policy.adapter.matrices.values()].flatMap((matrices) => [Array.from(matrices.a), Array.from(matrices.b)]);

async function trainUntilSuccess() {
  const policy = await createPolicy();
  const initial = await successRate(policy);
  const metrics: DapoStepMetrics[] = [];
  const trainer = createTrainer(policy, { onMetrics: (step) => metrics.push(step) });
  const history: number[] = [];
  while (trainer.step < trainer.config.totalSteps && (history.at(-1) ?? 0) <= 0.95) {
    await trainer.run({ untilStep: trainer.step + 1 });
    history.push(await successRate(policy));
  }
  const adapter = adapterOf(policy);
  await policy.release();
  return { initial, history, adapter, metrics };
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('DAPO on a random tiny Qwen3 (LoRA on ONNX Runtime, clipped surrogate as a graph)', () => {
  it('moves a two-action choice from chance to > 95% success within 20 steps, deterministically', async () => {
    const first = await trainUntilSuccess();
    console.log(`tiny Qwen3 success by step: ${first.initial.toFixed(3)} -> ${first.history.map((value) => value.toFixed(3)).join(' ')}`);
    expect(first.initial).toBeGreaterThan(0.35);
    expect(first.initial).toBeLessThan(0.65);
    expect(first.history.at(-1) as number).toBeGreaterThan(0.95);
    expect(first.history.length).toBeLessThanOrEqual(20);
    // The sampler and the trainer are the same engine: their log-probs agree (float32).
    expect(first.metrics.every((step) => (step.samplerMismatch as number) < 1e-4)).toBe(true);
    expect(first.metrics.some((step) => (step.clipFraction as number) > 0 || (step.approxKl as number) > 0)).toBe(true);
    const second = await trainUntilSuccess();
    expect(second.history).toEqual(first.history);
    expect(second.adapter).toEqual(first.adapter);
  });

  it('a killed run resumed from its checkpoint ends with the same adapter as an uninterrupted run', async () => {
    const steps = 5;
    const straight = await createPolicy();
    const straightDir = mkdtempSync(join(tmpdir(), 'dapo-qwen3-'));
    folders.push(straightDir);
    await createTrainer(straight, { checkpointDir: straightDir }).run({ untilStep: steps });

    const dir = mkdtempSync(join(tmpdir(), 'dapo-qwen3-'));
    folders.push(dir);
    const killed = await createPolicy();
    const crashing = createTrainer(killed, {
      checkpointDir: dir,
      onMetrics: (metrics) => {
        if (metrics.step === 3) throw new Error('simulated kill'); // after the step-2 checkpoint
      },
    });
    await expect(crashing.run({ untilStep: steps })).rejects.toThrow('simulated kill');
    await killed.release();

    const resumed = await createPolicy();
    const trainer = createTrainer(resumed, { checkpointDir: dir });
    expect(await trainer.resume()).toBe(2);
    await trainer.run({ untilStep: steps });
    expect(adapterOf(resumed)).toEqual(adapterOf(straight));
    expect(adapterOf(resumed).flat().some((value) => value !== 0)).toBe(true);
    await resumed.release();
    await straight.release();
  });
});
