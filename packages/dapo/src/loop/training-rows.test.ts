import type { Step, Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { parseDapoConfig } from '../config/dapo-config';
import type { ScoredGroup } from './scored-group';
import { rowLength } from '@agentflow/core';
import { type TrainingRow, buildMicroBatches, buildTrainingRows, logprobsInLengthOrder, microBatchRanges, miniBatchRowIndices } from './training-rows';

const step = (index: number, completionTokenIds: number[], truncated = false): Step => ({
  index,
  prompt: [],
  completion: '',
  promptTokenIds: [100 + index],
  completionTokenIds,
  truncated,
  action: null,
  timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
});
const trajectory = (id: string, steps: Step[]): Trajectory => ({
  id,
  question: 'q',
  steps,
  answer: null,
  termination: 'finished',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 0,
});

// The spec's process example: o1 = [0.9, 0.2] (2 steps), o2 = [0.8, 0.7, 0.9] (3 steps).
const group: ScoredGroup = {
  promptIndex: 0,
  trajectories: [trajectory('o1', [step(0, [1, 2]), step(1, [3])]), trajectory('o2', [step(0, [4]), step(1, [5, 6, 7], true), step(2, [8])])],
  rewards: [0, 1],
  correct: [false, true],
  stepScores: [[0.9, 0.2], [0.8, 0.7, 0.9]],
};

describe('buildTrainingRows', () => {
  it('makes one row per step, every token carrying its step advantage', () => {
    const config = parseDapoConfig({ credit: { kind: 'process-sum' }, advantage: { eps: 0 } });
    const rows = buildTrainingRows([group], config);
    expect(rows.map((row) => row.completionIds)).toEqual([[1, 2], [3], [4], [5, 6, 7], [8]]);
    expect(rows.map((row) => row.promptIds)).toEqual([[100], [101], [100], [101], [102]]);
    const expected = [-1.02899151, -1.71498585, 1.02899151, 0.68599434, 0.68599434];
    rows.forEach((row, index) => {
      for (const value of row.advantages) expect(value).toBeCloseTo(expected[index] as number, 7);
    });
    expect(rows[3]?.mask).toEqual([1, 1, 1]);
    expect(buildTrainingRows([group], { ...config, maskTruncated: true })[3]?.mask).toEqual([0, 0, 0]);
  });

  it('micro-batch token weights add up to the token mean over the optimiser update', () => {
    const config = parseDapoConfig({ microBatchRows: 2, promptsPerBatch: 2, promptsPerMiniBatch: 1, maskTruncated: true });
    const rows = buildTrainingRows([group, { ...group, promptIndex: 1 }], config);
    const updates = miniBatchRowIndices(rows, config.promptsPerMiniBatch);
    expect(updates).toEqual([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]);
    const objective = { kind: 'clipped-surrogate', epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 } as const;
    const batches = buildMicroBatches({ rows, indices: updates[0] as number[], oldLogprobs: rows.map((row) => row.completionIds.map(() => -1)), config, objective });
    expect(batches.map((batch) => batch.completionIds.length)).toEqual([2, 2, 1]);
    const weights = batches.flatMap((batch) => batch.tokenWeights.flat());
    // 8 tokens, 3 of them in the masked truncated step: 5 count, each 1/5.
    expect(weights.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 12);
    expect(weights.filter((value) => value > 0)).toEqual([0.2, 0.2, 0.2, 0.2, 0.2]);
  });

  it('closes a micro-batch at microBatchTokens padded tokens, whatever the sequence length', () => {
    // Rows of 100 tokens: 4 fit a budget of 400; rows of 400 tokens go one by one.
    expect(microBatchRanges([100, 100, 100, 100, 100, 100], 8, 400)).toEqual([[0, 4], [4, 6]]);
    expect(microBatchRanges([400, 400, 400], 8, 400)).toEqual([[0, 1], [1, 2], [2, 3]]);
    // Padding counts: a long row after short ones closes the batch before it.
    expect(microBatchRanges([50, 50, 300], 8, 400)).toEqual([[0, 2], [2, 3]]);
    // A row over the budget still goes, alone; rows alone bound as before without a budget.
    expect(microBatchRanges([900, 10], 8, 400)).toEqual([[0, 1], [1, 2]]);
    expect(microBatchRanges([10, 10, 10], 2)).toEqual([[0, 2], [2, 3]]);
    const config = parseDapoConfig({ microBatchRows: 8, microBatchTokens: 6, promptsPerBatch: 2, promptsPerMiniBatch: 1 });
    const rows = buildTrainingRows([group], config);
    const objective = { kind: 'clipped-surrogate', epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 } as const;
    const batches = buildMicroBatches({ rows, indices: [0, 1, 2, 3, 4], oldLogprobs: rows.map((row) => row.completionIds.map(() => -1)), config, objective });
    for (const batch of batches) {
      const longest = Math.max(...batch.promptIds.map((prompt, index) => prompt.length + batch.completionIds[index]!.length));
      expect(batch.promptIds.length * longest).toBeLessThanOrEqual(6);
    }
    expect(batches.flatMap((batch) => batch.tokenWeights.flat()).reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 12);
  });
});

describe('micro-batches in length order', () => {
  // One trajectory of four steps whose prompts grow, twice: in trajectory order every
  // micro-batch of two would pair a short row with a long one.
  const grown = (index: number, promptLength: number): Step => ({
    ...step(index, [10 + index, 20 + promptLength]),
    promptTokenIds: Array.from({ length: promptLength }, (_, token) => token + 1),
  });
  const growing = (id: string) => trajectory(id, [grown(0, 3), grown(1, 30), grown(2, 5), grown(3, 40)]);
  const mixed: ScoredGroup = {
    promptIndex: 0,
    trajectories: [growing('a'), growing('b')],
    rewards: [0, 1],
    correct: [false, true],
    stepScores: [[0.1, 0.2, 0.3, 0.4], [0.9, 0.8, 0.7, 0.6]],
  };
  const config = parseDapoConfig({ microBatchRows: 2, credit: { kind: 'process-sum' } });
  const objective = { kind: 'clipped-surrogate', epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0 } as const;
  const padded = (batches: { promptIds: number[][]; completionIds: number[][] }[]) =>
    batches.reduce((sum, batch) => sum + batch.promptIds.length * Math.max(...batch.promptIds.map((prompt, row) => prompt.length + (batch.completionIds[row] as number[]).length)), 0);

  it('cuts micro-batches from the rows shortest first, each row with its own advantages, old log-probs and weights', () => {
    const rows = buildTrainingRows([mixed], config);
    expect(rows.map(rowLength)).toEqual([5, 32, 7, 42, 5, 32, 7, 42]);
    // Old log-probs that name their row, so a row that travels without them shows.
    const oldLogprobs = rows.map((_, index) => [-index, -index - 0.5]);
    const batches = buildMicroBatches({ rows, indices: rows.map((_, index) => index), oldLogprobs, config, objective });
    const lengths = batches.map((batch) => batch.promptIds.map((prompt, row) => prompt.length + (batch.completionIds[row] as number[]).length));
    expect(lengths).toEqual([[5, 5], [7, 7], [32, 32], [42, 42]]);
    // 4 x 2 x (5, 7, 32, 42) padded tokens, where trajectory order pads 2 x (32 + 42) x 2.
    expect(padded(batches)).toBe(172);
    const inOrder = batches.flatMap((batch) => (batch.oldLogprobs ?? []).map((logprobs) => -(logprobs[0] as number)));
    expect(inOrder).toEqual([0, 4, 2, 6, 1, 5, 3, 7]);
    batches.forEach((batch) => {
      (batch.oldLogprobs ?? []).forEach((logprobs, row) => {
        const source = rows[-(logprobs[0] as number)] as TrainingRow;
        expect(batch.completionIds[row]).toEqual(source.completionIds);
        expect(batch.advantages?.[row]).toEqual(source.advantages);
      });
    });
    // Token mean over the update: 16 tokens, each 1/16, whatever the order.
    expect(batches.flatMap((batch) => batch.tokenWeights.flat())).toEqual(Array(16).fill(1 / 16));
  });

  it('scores log-probs in length order and hands each row back its own', async () => {
    const rows = buildTrainingRows([mixed], config);
    const seen: number[][] = [];
    // A scorer whose answer is a function of the row it is given.
    const logprobs = async (batch: { promptIds: number[][]; completionIds: number[][] }) => {
      seen.push(batch.promptIds.map((prompt, row) => prompt.length + (batch.completionIds[row] as number[]).length));
      return batch.completionIds.map((completion) => completion.map((id) => -id));
    };
    const scored = await logprobsInLengthOrder(rows, logprobs, config);
    expect(seen).toEqual([[5, 5], [7, 7], [32, 32], [42, 42]]);
    expect(scored).toEqual(rows.map((row) => row.completionIds.map((id) => -id)));
  });
});
