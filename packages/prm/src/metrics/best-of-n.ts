import { AgentFlowError, assertNever } from '@agentflow/core';

/** One candidate trajectory of a question: its step scores and whether its answer was right. */
export interface ScoredTrajectory {
  /** Trajectories with the same group id answer the same question. */
  groupId: string;
  stepScores: number[];
  correct: boolean;
}

/** How to turn step scores into one trajectory score. */
export type StepAggregation = 'min' | 'product';

/**
 * The trajectory score under an aggregation. A trajectory without steps scores 0: there
 * is no evidence that it is good, and 1 (the neutral element) would rank it first.
 */
export function aggregateStepScores(stepScores: readonly number[], aggregation: StepAggregation): number {
  if (stepScores.length === 0) return 0;
  switch (aggregation) {
    case 'min':
      return Math.min(...stepScores);
    case 'product':
      return stepScores.reduce((product, score) => product * score, 1);
    default:
      return assertNever(aggregation, 'step aggregation');
  }
}

export interface BestOfNResult {
  /** Fraction of groups whose top-scored trajectory is correct (expected value under random tie-breaking). */
  accuracy: number;
  /** Fraction correct when picking a trajectory uniformly at random: the floor to beat. */
  randomAccuracy: number;
  /** Fraction of groups with at least one correct trajectory: the ceiling. */
  oracleAccuracy: number;
  groups: number;
}

/**
 * Best-of-N accuracy: in each group, pick the trajectory with the highest aggregated
 * step score and count the group as solved when it is correct. Ties are not broken by
 * position (which would flatter whatever order the file has): a group with k tied top
 * candidates, c of them correct, counts c / k.
 */
export function bestOfNAccuracy(trajectories: readonly ScoredTrajectory[], aggregation: StepAggregation): BestOfNResult {
  const groups = new Map<string, ScoredTrajectory[]>();
  for (const trajectory of trajectories) {
    const group = groups.get(trajectory.groupId) ?? [];
    group.push(trajectory);
    groups.set(trajectory.groupId, group);
  }
  if (groups.size === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'bestOfNAccuracy needs at least one trajectory.' });
  }
  let accuracy = 0;
  let randomAccuracy = 0;
  let oracleAccuracy = 0;
  for (const group of groups.values()) {
    const scores = group.map((trajectory) => aggregateStepScores(trajectory.stepScores, aggregation));
    const best = Math.max(...scores);
    const top = group.filter((_, index) => scores[index] === best);
    accuracy += top.filter((trajectory) => trajectory.correct).length / top.length;
    randomAccuracy += group.filter((trajectory) => trajectory.correct).length / group.length;
    oracleAccuracy += group.some((trajectory) => trajectory.correct) ? 1 : 0;
  }
  return {
    accuracy: accuracy / groups.size,
    randomAccuracy: randomAccuracy / groups.size,
    oracleAccuracy: oracleAccuracy / groups.size,
    groups: groups.size,
  };
}
