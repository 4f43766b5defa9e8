import { AgentFlowError } from '@agentflow/core';
import type { PrmExample } from '../example/prm-example';
import { type BestOfNResult, bestOfNAccuracy, type ScoredTrajectory } from './best-of-n';
import { type FirstErrorCase, type FirstErrorF1Result, firstErrorF1 } from './first-error-f1';
import { constantPredictorMse, mean, meanSquaredError, pearson, spearman } from './regression';

export interface PrmEvaluationSettings {
  /** Mean label of the training set: the constant predictor's guess. */
  trainingLabelMean: number;
  /** A label below this marks a step as erroneous (first-error F1). Default 0.5. */
  labelThreshold?: number;
  /** A score below this marks a step as erroneous (first-error F1). Default 0.5. */
  scoreThreshold?: number;
  /** An outcome reward at or above this counts as a correct trajectory (best-of-N). Default 0.5. */
  correctThreshold?: number;
}

/** Every PRM metric on one held-out set. NaN marks a metric that is undefined on the data. */
export interface PrmEvaluation {
  examples: number;
  mse: number;
  constantPredictorMse: number;
  pearson: number;
  spearman: number;
  /** Absent when no example carries an outcome reward. */
  bestOfN?: { min: BestOfNResult; product: BestOfNResult };
  firstError: FirstErrorF1Result & { labelThreshold: number; scoreThreshold: number };
}

/**
 * Scores a PRM on held-out examples: `scores[i]` is its prediction for `examples[i]`.
 * Steps are regrouped into trajectories by `trajectoryId` (ordered by `stepIndex`), and
 * trajectories into questions by `taskId`, or by the question text when there is none.
 */
export function evaluatePrm(
  examples: readonly PrmExample[],
  scores: readonly number[],
  settings: PrmEvaluationSettings,
): PrmEvaluation {
  if (examples.length !== scores.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `evaluatePrm: ${scores.length} scores for ${examples.length} examples.`,
    });
  }
  const labelThreshold = settings.labelThreshold ?? 0.5;
  const scoreThreshold = settings.scoreThreshold ?? 0.5;
  const correctThreshold = settings.correctThreshold ?? 0.5;
  const labels = examples.map((example) => example.label);

  const byTrajectory = new Map<string, { example: PrmExample; score: number }[]>();
  examples.forEach((example, index) => {
    const rows = byTrajectory.get(example.trajectoryId) ?? [];
    rows.push({ example, score: scores[index] as number });
    byTrajectory.set(example.trajectoryId, rows);
  });
  const cases: FirstErrorCase[] = [];
  const scored: ScoredTrajectory[] = [];
  for (const rows of byTrajectory.values()) {
    rows.sort((a, b) => a.example.stepIndex - b.example.stepIndex);
    cases.push({ labels: rows.map((row) => row.example.label), scores: rows.map((row) => row.score) });
    const first = (rows[0] as (typeof rows)[number]).example;
    if (first.outcomeReward !== undefined) {
      scored.push({
        groupId: first.taskId ?? first.question,
        stepScores: rows.map((row) => row.score),
        correct: first.outcomeReward >= correctThreshold,
      });
    }
  }

  return {
    examples: examples.length,
    mse: meanSquaredError(scores, labels),
    constantPredictorMse: constantPredictorMse(labels, settings.trainingLabelMean),
    pearson: pearson(scores, labels),
    spearman: spearman(scores, labels),
    ...(scored.length === 0
      ? {}
      : { bestOfN: { min: bestOfNAccuracy(scored, 'min'), product: bestOfNAccuracy(scored, 'product') } }),
    firstError: { ...firstErrorF1(cases, { labelThreshold, scoreThreshold }), labelThreshold, scoreThreshold },
  };
}

/** The mean label of a training set, for `trainingLabelMean`. */
export function labelMean(examples: readonly PrmExample[]): number {
  return mean(examples.map((example) => example.label));
}
