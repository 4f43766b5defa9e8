import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import { discountedStepReturns, stepGroupAdvantages } from './gigpo';
import { type GroupAdvantageSettings, assertAdvantageSettings, groupAdvantages } from './group-advantages';
import { assertFinite, standardize } from './statistics';

/** Process credit from step scores: DeepSeekMath's normalised sum, or PURE's min-form. */
export type ProcessCredit =
  /** DeepSeekMath 4.1.3: normalise all step scores of the group, then sum from each step on. */
  | { kind: 'process-sum' }
  /** PURE: weight each trajectory's step scores by softmax(-r / T) (a soft minimum), then return-to-go, normalised over the group. */
  | { kind: 'process-min'; temperature: number };

/** How the credit of each planner step is computed. */
export type StepCredit =
  /** Flow-GRPO: the outcome advantage of the trajectory, broadcast to every step. */
  | { kind: 'outcome' }
  | ProcessCredit
  /** A_outcome + lambda * A_process. */
  | { kind: 'mix'; lambda: number; process: ProcessCredit }
  /**
   * GiGPO (Feng et al., 2025, arXiv 2505.10978): A_outcome + omega * A_step, where A_step
   * normalises each step's discounted return (gamma^(steps to the end) x outcome reward)
   * among the group's steps that act from the same state. Needs no step scores.
   */
  | { kind: 'gigpo'; gamma: number; omega: number };

/** One group of rollouts of the same prompt, as credit assignment sees it. */
export interface GroupCreditInput {
  /** [G] outcome reward of each rollout (overlong penalty already added). */
  outcomeRewards: ArrayLike<number>;
  /** [G][steps_i] process score of each step; needed by every credit except 'outcome'. */
  stepScores?: ReadonlyArray<ArrayLike<number>>;
  /** [G] number of steps of each rollout (taken from stepScores when those are given). */
  stepCounts: ArrayLike<number>;
  /**
   * [G][steps_i] the state each step acts from, as a key: steps with equal keys form one
   * GiGPO step group. Needed by 'gigpo' (the loop uses `stepStateKeys`).
   */
  stepStates?: ReadonlyArray<ReadonlyArray<string>>;
}

/** True when the credit needs process scores (a StepScorer or stored step rewards). */
export function needsStepScores(credit: StepCredit): boolean {
  switch (credit.kind) {
    case 'outcome':
    case 'gigpo':
      return false;
    case 'process-sum':
    case 'process-min':
    case 'mix':
      return true;
    default:
      return assertNever(credit, 'step credit');
  }
}

/** [G][steps_i] advantage of every step of every rollout of one group. */
export function assignStepCredit(
  input: GroupCreditInput,
  credit: StepCredit,
  settings: GroupAdvantageSettings,
): Float64Array[] {
  assertAdvantageSettings(settings);
  switch (credit.kind) {
    case 'outcome':
      return outcomeCredit(input, settings);
    case 'process-sum':
    case 'process-min':
      return processCredit(input, credit, settings);
    case 'mix': {
      const outcome = outcomeCredit(input, settings);
      const process = processCredit(input, credit.process, settings);
      return outcome.map((row, rollout) => {
        const processRow = process[rollout] as Float64Array;
        return row.map((value, step) => value + credit.lambda * (processRow[step] as number));
      });
    }
    case 'gigpo':
      return gigpoCredit(input, credit, settings);
    default:
      return assertNever(credit, 'step credit');
  }
}

function outcomeCredit(input: GroupCreditInput, settings: GroupAdvantageSettings): Float64Array[] {
  const advantages = groupAdvantages(input.outcomeRewards, settings); // [G]
  if (input.stepCounts.length !== advantages.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Got ${advantages.length} outcome rewards but ${input.stepCounts.length} step counts.`,
    });
  }
  return Array.from(advantages, (advantage, rollout) =>
    new Float64Array(input.stepCounts[rollout] as number).fill(advantage),
  );
}

function gigpoCredit(input: GroupCreditInput, credit: { gamma: number; omega: number }, settings: GroupAdvantageSettings): Float64Array[] {
  if (input.stepStates === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: "Step credit 'gigpo' needs the state of every step (stepStates, e.g. from stepStateKeys); none were given.",
    });
  }
  if (!(credit.omega >= 0) || !Number.isFinite(credit.omega)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `GiGPO omega must be a finite number >= 0, got ${describeValue(credit.omega)}.` });
  }
  // Episode level (Eq. 3): the outcome advantage, as Flow-GRPO broadcasts it.
  const episode = outcomeCredit(input, settings); // [G][steps_i]
  // Step level (Eq. 5-7), with the same normalisation as the episode level.
  const returns = discountedStepReturns(input.outcomeRewards, input.stepCounts, credit.gamma);
  const step = stepGroupAdvantages(returns, input.stepStates, settings);
  // Eq. 8: A = A_episode + omega * A_step.
  return episode.map((row, rollout) => {
    const stepRow = step[rollout] as Float64Array;
    return row.map((value, index) => value + credit.omega * (stepRow[index] as number));
  });
}

function processCredit(
  input: GroupCreditInput,
  credit: ProcessCredit,
  settings: GroupAdvantageSettings,
): Float64Array[] {
  const scores = input.stepScores;
  if (scores === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Step credit '${credit.kind}' needs step scores (a StepScorer or trajectory.stepRewards); none were given.`,
    });
  }
  if (scores.length !== input.stepCounts.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `Got step scores for ${scores.length} rollouts but ${input.stepCounts.length} step counts.`,
    });
  }
  scores.forEach((row, rollout) => {
    assertFinite(row, `stepScores[${rollout}]`);
    if (row.length !== input.stepCounts[rollout]) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Rollout ${rollout} has ${input.stepCounts[rollout]} steps but ${row.length} step scores.`,
      });
    }
  });
  switch (credit.kind) {
    case 'process-sum': {
      // Normalise over all steps of the group, then sum from each step to the end.
      const normalised = splitRows(standardize(flatten(scores), settings), scores);
      return normalised.map(suffixSums);
    }
    case 'process-min': {
      if (!(credit.temperature > 0)) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `process-min temperature must be > 0, got ${describeValue(credit.temperature)}.`,
        });
      }
      const returns = scores.map((row) => suffixSums(softMinWeighted(row, credit.temperature)));
      return splitRows(standardize(flatten(returns), settings), scores);
    }
    default:
      return assertNever(credit, 'process credit');
  }
}

/** r_j * softmax(-r / T)_j over one trajectory's steps: the total tends to min(r) as T -> 0. */
export function softMinWeighted(scores: ArrayLike<number>, temperature: number): Float64Array {
  const count = scores.length;
  const result = new Float64Array(count);
  if (count === 0) return result;
  let lowest = Number.POSITIVE_INFINITY;
  for (let step = 0; step < count; step++) lowest = Math.min(lowest, scores[step] as number);
  // Shift by the minimum so the largest exponent is exp(0): no overflow at small T.
  let total = 0;
  for (let step = 0; step < count; step++) {
    const weight = Math.exp(-((scores[step] as number) - lowest) / temperature);
    result[step] = weight;
    total += weight;
  }
  for (let step = 0; step < count; step++) result[step] = ((result[step] as number) / total) * (scores[step] as number);
  return result;
}

/** out[j] = sum of values[k] for k >= j. */
export function suffixSums(values: ArrayLike<number>): Float64Array {
  const result = new Float64Array(values.length);
  let running = 0;
  for (let index = values.length - 1; index >= 0; index--) {
    running += values[index] as number;
    result[index] = running;
  }
  return result;
}

function flatten(rows: ReadonlyArray<ArrayLike<number>>): Float64Array {
  let total = 0;
  for (const row of rows) total += row.length;
  const flat = new Float64Array(total);
  let offset = 0;
  for (const row of rows) {
    for (let index = 0; index < row.length; index++) flat[offset + index] = row[index] as number;
    offset += row.length;
  }
  return flat;
}

function splitRows(flat: Float64Array, shape: ReadonlyArray<ArrayLike<number>>): Float64Array[] {
  let offset = 0;
  return shape.map((row) => {
    const slice = flat.slice(offset, offset + row.length);
    offset += row.length;
    return slice;
  });
}
