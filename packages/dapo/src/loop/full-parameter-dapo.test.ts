import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@agentflow/core';
import { createLocalPolicy, type LocalPolicy } from '@agentflow/models';
import { createRuntime } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { clippedSurrogateObjective } from '../graph/clipped-surrogate-graph';
import { createDapoTrainer } from './dapo-trainer';
import type { DapoStepMetrics } from './step-metrics';
import { type Prompt, prompts, rollouts, successRate, twoActionModel } from './two-action-task.test-helper';

// The two-action task of tiny-qwen3-dapo.test.ts (the right action is the opposite of the
// prompt's last token), trained here with every base weight instead of a LoRA adapter.
// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
type FullPolicy = LocalPolicy<{ kind: 'full' }>;

async function createFullPolicy(): Promise<FullPolicy> {
  return createLocalPolicy({ model: twoActionModel(), runtime, eosTokenIds: [], trainable: { kind: 'full' }, seed: 3, objectives: [clippedSurrogateObjective] });
}

/** The DAPO trainer of this task, with the KL term against the policy's starting weights (frozen now). */
function createTrainer(policy: FullPolicy, settings: { checkpointDir?: string; onMetrics?: (metrics: DapoStepMetrics) => void } = {}) {
  return createDapoTrainer<Prompt>({
    config: {
      groupSize: 8,
      promptsPerBatch: 4,
      promptsPerMiniBatch: 2,
      learningRate: 0.002,
      warmupSteps: 0,
      totalSteps: 3,
      checkpointEvery: 2,
      klCoefficient: 0.01,
      dynamicSampling: { kind: 'refill', maxRounds: 30 },
    },
    policy,
    referencePolicy: policy.frozen(),
    prompts,
    sampleRollouts: rollouts(policy),
    scoreOutcome: (prompt, trajectory) => {
      const correct = trajectory.steps[0]?.completionTokenIds?.[0] === prompt.correct;
      return { reward: correct ? 1 : 0, correct };
    },
    random: createRandom(5),
    onMetrics: (metrics) => {
      settings.onMetrics?.(metrics);
    },
    ...(settings.checkpointDir ? { checkpointDir: settings.checkpointDir } : {}),
  });
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('DAPO with full-parameter training (clipped surrogate on every base weight)', () => {
  it("the surrogate's loss is -sum(w A) at ratio 1 and falls after an update on the same batch", async () => {
    const policy = await createFullPolicy();
    const promptIds = prompts.map((prompt) => prompt.ids);
    const completionIds = prompts.map((prompt) => [prompt.correct]);
    const oldLogprobs = await policy.logprobs({ promptIds, completionIds });
    // Both halves push toward action 1: up where it is right, down where it is wrong.
    const advantages = [[1], [1], [-0.5], [-0.5]];
    const batch = {
      promptIds,
      completionIds,
      oldLogprobs,
      advantages,
      tokenWeights: prompts.map(() => [0.25]),
      objective: { kind: 'clipped-surrogate' as const, epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 },
    };
    const first = await policy.accumulateGradients(batch);
    expect(first.loss).toBeCloseTo(-0.25 * (1 + 1 - 0.5 - 0.5), 5);
    expect(first.clipFraction).toBe(0);
    expect(first.approxKl).toBeCloseTo(0, 6);
    // A small step: AdamW's first update moves every weight by about the learning rate.
    await policy.applyGradients({ learningRate: 1e-4, maxGradNorm: 1 });
    const second = await policy.accumulateGradients(batch);
    expect(second.loss).toBeLessThan(first.loss);
    expect(second.approxKl!).toBeGreaterThan(0);
    await policy.release();
  });

  it('moves every trainable weight in a few steps, the sampler reading the live weights; resumes from a checkpoint exactly', async () => {
    const policy = await createFullPolicy();
    const start = new Map([...policy.model.weights].map(([name, tensor]) => [name, tensor.data.slice()]));
    const initial = await successRate(policy);
    const metrics: DapoStepMetrics[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'dapo-full-'));
    const copy = mkdtempSync(join(tmpdir(), 'dapo-full-'));
    folders.push(dir, copy);
    const trainer = createTrainer(policy, { checkpointDir: dir, onMetrics: (step) => metrics.push(step) });
    await trainer.run({ untilStep: 2 });
    cpSync(dir, copy, { recursive: true }); // the checkpoint of step 2, as a killed run would leave it
    await trainer.run({ untilStep: 3 });
    expect(metrics).toHaveLength(3);
    expect(policy.trainedWeights).toEqual([...policy.model.weights.keys()]);
    const unmoved = policy.trainedWeights.filter((name) => {
      const now = policy.model.weights.get(name)!.data;
      return now.every((value, index) => value === start.get(name)![index]);
    });
    expect(unmoved).toEqual([]);
    for (const step of metrics) {
      expect(Number.isFinite(step.loss)).toBe(true);
      expect(step.gradNorm).toBeGreaterThan(0);
      // The sampler's log-probs (generation session) agree with the trainer's (training session)
      // after every update: both read the weights the optimiser wrote, in place.
      expect(step.samplerMismatch as number).toBeLessThan(1e-4);
    }
    // The reference is the starting weights, frozen: the policy moved away from it, and up.
    expect(metrics.at(-1)!.referenceKl as number).toBeGreaterThan(0);
    expect(await successRate(policy)).toBeGreaterThan(initial + 0.2); // measured: 0.45 -> 0.95

    // A fresh policy resumed from the step-2 checkpoint (weights and AdamW state) ends where the run did.
    const resumed = await createFullPolicy();
    const resumedTrainer = createTrainer(resumed, { checkpointDir: copy });
    expect(await resumedTrainer.resume()).toBe(2);
    await resumedTrainer.run({ untilStep: 3 });
    for (const [name, tensor] of policy.model.weights) expect(resumed.model.weights.get(name)!.data, name).toEqual(tensor.data);
    await policy.release();
    await resumed.release();
  });
});
