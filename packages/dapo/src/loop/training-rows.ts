import { lengthOrder, type PolicyBatch, type PolicyObjective, type PolicyTrainingBatch, rowLength } from '@agentflow/core';
import type { DapoConfig } from '../config/dapo-config';
import { completionMask } from '../math/overlong';
import { assignStepCredit } from '../math/step-credit';
import { expandStepAdvantages } from '../math/token-advantages';
import { aggregationTokenWeights } from '../math/token-weights';
import type { ScoredGroup } from './scored-group';
import { stepStateKeys } from './step-states';

/** One planner completion as the loss sees it. Per-token arrays are [tokens]. */
export interface TrainingRow {
  /** Index of the group (prompt) in the batch. */
  group: number;
  promptIds: number[];
  completionIds: number[];
  advantages: number[];
  /** 1 counts, 0 masked (a truncated completion when maskTruncated is on). */
  mask: number[];
  /** Log-probs the sampler reported, when it did. */
  samplingLogprobs?: number[];
}

/**
 * Credit assignment for every group, then one row per planner step: each step is its own
 * completion and all its tokens carry the step's advantage.
 */
export function buildTrainingRows(groups: readonly ScoredGroup[], config: DapoConfig): TrainingRow[] {
  const rows: TrainingRow[] = [];
  groups.forEach((group, groupIndex) => {
    const credit = assignStepCredit(
      {
        outcomeRewards: group.rewards,
        stepScores: group.stepScores,
        stepCounts: group.trajectories.map((trajectory) => trajectory.steps.length),
        ...(config.credit.kind === 'gigpo' ? { stepStates: group.trajectories.map(stepStateKeys) } : {}),
      },
      config.credit,
      config.advantage,
    );
    group.trajectories.forEach((trajectory, rollout) => {
      const steps = trajectory.steps;
      const tokenAdvantages = expandStepAdvantages(
        credit[rollout] as Float64Array,
        steps.map((step) => step.completionTokenIds?.length ?? 0),
      );
      steps.forEach((step, index) => {
        const completionIds = step.completionTokenIds ?? [];
        if (completionIds.length === 0) return;
        rows.push({
          group: groupIndex,
          promptIds: step.promptTokenIds ?? [],
          completionIds,
          advantages: Array.from(tokenAdvantages[index] as Float64Array),
          mask: Array.from(completionMask(completionIds.length, step.truncated, config.maskTruncated)),
          ...(step.completionLogprobs === undefined ? {} : { samplingLogprobs: step.completionLogprobs }),
        });
      });
    });
  });
  return rows;
}

/** Row indices of each optimiser update: consecutive runs of `groupsPerMiniBatch` groups. */
export function miniBatchRowIndices(rows: readonly TrainingRow[], groupsPerMiniBatch: number): number[][] {
  const batches: number[][] = [];
  rows.forEach((row, index) => {
    const slot = Math.floor(row.group / groupsPerMiniBatch);
    while (batches.length <= slot) batches.push([]);
    (batches[slot] as number[]).push(index);
  });
  return batches.filter((batch) => batch.length > 0);
}

export interface MicroBatchSettings {
  rows: readonly TrainingRow[];
  /** Rows of one optimiser update; token weights are computed over exactly these. */
  indices: readonly number[];
  oldLogprobs: readonly number[][];
  referenceLogprobs?: readonly number[][];
  config: DapoConfig;
  objective: PolicyObjective;
}

/**
 * [start, end) ranges over rows of the given lengths (prompt + completion tokens), in order:
 * at most `maxRows` rows each and, with `maxTokens`, at most that many padded tokens (rows x
 * the longest row); a row longer than `maxTokens` alone.
 */
export function microBatchRanges(lengths: readonly number[], maxRows: number, maxTokens?: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  let longest = 0;
  lengths.forEach((length, index) => {
    const rows = index - start;
    const widened = Math.max(longest, length);
    if (rows > 0 && (rows >= maxRows || (maxTokens !== undefined && (rows + 1) * widened > maxTokens))) {
      ranges.push([start, index]);
      start = index;
      longest = length;
    } else {
      longest = widened;
    }
  });
  if (start < lengths.length) ranges.push([start, lengths.length]);
  return ranges;
}

/**
 * Splits one optimiser update into micro-batches of at most microBatchRows completions and
 * microBatchTokens padded tokens, its rows taken shortest first (core's `lengthOrder`).
 * Token weights come from the whole update, so the micro-batch losses add up to the
 * chosen aggregation over it.
 */
export function buildMicroBatches(settings: MicroBatchSettings): PolicyTrainingBatch[] {
  const { rows, config } = settings;
  const drawnLengths = settings.indices.map((index) => rowLength(rows[index] as TrainingRow));
  const order = lengthOrder(drawnLengths);
  const indices = order.map((at) => settings.indices[at] as number);
  const lengths = order.map((at) => drawnLengths[at] as number);
  const weights = aggregationTokenWeights(
    indices.map((index) => (rows[index] as TrainingRow).mask),
    { aggregation: config.aggregation, tokenBudget: config.drGrpoTokenBudget ?? config.overlong.maxLength },
  );
  const batches: PolicyTrainingBatch[] = [];
  for (const [start, end] of microBatchRanges(lengths, config.microBatchRows, config.microBatchTokens)) {
    const slice = indices.slice(start, end);
    const batch: PolicyTrainingBatch = {
      objective: settings.objective,
      promptIds: slice.map((index) => (rows[index] as TrainingRow).promptIds),
      completionIds: slice.map((index) => (rows[index] as TrainingRow).completionIds),
      advantages: slice.map((index) => (rows[index] as TrainingRow).advantages),
      oldLogprobs: slice.map((index) => settings.oldLogprobs[index] as number[]),
      tokenWeights: slice.map((_index, offset) => Array.from(weights[start + offset] as Float64Array)),
    };
    if (settings.referenceLogprobs) batch.referenceLogprobs = slice.map((index) => settings.referenceLogprobs?.[index] as number[]);
    batches.push(batch);
  }
  return batches;
}

/**
 * Each row's log-probs, in the rows' order, from `logprobs` run on micro-batches (of
 * microBatchRows rows and microBatchTokens padded tokens at most) cut from the rows shortest
 * first (core's `lengthOrder`).
 */
export async function logprobsInLengthOrder(
  rows: readonly Pick<TrainingRow, 'promptIds' | 'completionIds'>[],
  logprobs: (batch: PolicyBatch) => Promise<number[][]>,
  config: Pick<DapoConfig, 'microBatchRows' | 'microBatchTokens'>,
): Promise<number[][]> {
  const result: number[][] = new Array(rows.length);
  const rowLengths = rows.map(rowLength);
  const order = lengthOrder(rowLengths);
  const lengths = order.map((index) => rowLengths[index] as number);
  for (const [start, end] of microBatchRanges(lengths, config.microBatchRows, config.microBatchTokens)) {
    const slice = order.slice(start, end);
    const scored = await logprobs({
      promptIds: slice.map((index) => (rows[index] as TrainingRow).promptIds),
      completionIds: slice.map((index) => (rows[index] as TrainingRow).completionIds),
    });
    slice.forEach((index, offset) => {
      result[index] = scored[offset] as number[];
    });
  }
  return result;
}
