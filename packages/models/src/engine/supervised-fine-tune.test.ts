import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLocalPolicy } from '../policy/local-policy';
import { createRandomModel } from '../weights/random-model';
import { supervisedFineTune, supervisedLearningRate } from './supervised-fine-tune';

const config = { ...getModelPreset('tiny'), hiddenSize: 32, intermediateSize: 48, headDim: 8 };
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const examples = [
  { promptIds: [5, 6, 7], completionIds: [40, 41, 42, 0] },
  { promptIds: [8, 9], completionIds: [50, 51, 0] },
  { promptIds: [5, 9, 6], completionIds: [60, 61, 62, 63, 0] },
];

describe('supervisedFineTune', () => {
  it('lowers the loss epoch by epoch and reports each epoch once, resuming where it stopped', async () => {
    const policy = await createLocalPolicy({ model: createRandomModel(config, 3, { std: 0.2 }), lora: { rank: 4, alpha: 8 }, seed: 1, runtime });
    const seen: number[] = [];
    const settings = { epochs: 6, batchSize: 2, learningRate: 5e-2, warmupSteps: 2, schedule: 'cosine' as const, seed: 0, onEpoch: (epoch: number) => void seen.push(epoch) };
    const first = await supervisedFineTune(policy, examples, { ...settings, epochs: 3 });
    const rest = await supervisedFineTune(policy, examples, { ...settings, startEpoch: 3 });
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(first).toHaveLength(3);
    expect(rest).toHaveLength(3);
    expect(rest.at(-1)!).toBeLessThan(first[0]! * 0.5);
    await policy.release();
  });

  it('warms up linearly, then follows a cosine to a tenth of the peak, or stays constant', () => {
    const schedule = { learningRate: 1, warmupSteps: 4, schedule: 'cosine' as const };
    expect([0, 1, 2, 3].map((step) => supervisedLearningRate(schedule, step, 24))).toEqual([0.25, 0.5, 0.75, 1]);
    expect(supervisedLearningRate(schedule, 4, 24)).toBeCloseTo(1, 12);
    expect(supervisedLearningRate(schedule, 24, 24)).toBeCloseTo(0.1, 12);
    expect(supervisedLearningRate({ ...schedule, schedule: 'constant' }, 20, 24)).toBe(1);
  });

  it('with microBatchRows, runs each update shortest first in parts that add up to the same update and loss', async () => {
    // Four examples of very different lengths in one update of four.
    const mixed = [
      { promptIds: Array.from({ length: 30 }, (_, index) => 5 + (index % 20)), completionIds: [40, 41, 0] },
      { promptIds: [8, 9], completionIds: [50, 0] },
      { promptIds: Array.from({ length: 24 }, (_, index) => 6 + (index % 17)), completionIds: [60, 61, 62, 0] },
      { promptIds: [5, 9, 6], completionIds: [63, 0] },
    ];
    const train = async (microBatchRows: number | undefined) => {
      const policy = await createLocalPolicy({ model: createRandomModel(config, 3, { std: 0.2 }), trainable: { kind: 'full' }, seed: 1, runtime });
      const runs: number[][] = [];
      const recording = {
        accumulateGradients: (batch: Parameters<typeof policy.accumulateGradients>[0]) => {
          runs.push(batch.promptIds.map((prompt, row) => prompt.length + batch.completionIds[row]!.length));
          return policy.accumulateGradients(batch);
        },
        applyGradients: policy.applyGradients.bind(policy),
      };
      const losses = await supervisedFineTune(recording, mixed, { epochs: 2, batchSize: 4, learningRate: 1e-2, warmupSteps: 0, schedule: 'constant', seed: 0, ...(microBatchRows === undefined ? {} : { microBatchRows }) });
      const weights = [...policy.model.weights.values()].map((tensor) => Array.from(tensor.data as Float32Array));
      await policy.release();
      return { runs, losses, weights };
    };
    const whole = await train(undefined);
    const split = await train(2);
    expect(whole.runs.map((lengths) => lengths.length)).toEqual([4, 4]);
    // Each update in two runs of two, the short examples (4, 5 tokens) apart from the long ones (28, 33).
    expect(split.runs).toEqual([[4, 5], [28, 33], [4, 5], [28, 33]]);
    for (const [epoch, loss] of split.losses.entries()) expect(loss).toBeCloseTo(whole.losses[epoch]!, 5);
    const gaps = split.weights.flatMap((values, tensor) => values.map((value, index) => Math.abs(value - whole.weights[tensor]![index]!)));
    expect(Math.max(...gaps)).toBeLessThan(1e-5);
  });

  it('refuses a batch size that is not a positive integer', async () => {
    const policy = { accumulateGradients: async () => ({ loss: 0 }), applyGradients: async () => ({ gradNorm: 0 }) };
    await expect(supervisedFineTune(policy as never, examples, { epochs: 1, batchSize: 0, learningRate: 1, warmupSteps: 0, schedule: 'constant', seed: 0 })).rejects.toThrow('batchSize must be a positive integer, got 0');
  });
});
