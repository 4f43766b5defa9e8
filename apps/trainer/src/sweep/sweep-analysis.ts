import { createRandom } from '@agentflow/core';
import { compareLearningCurvesBySeed, type MeanCurvePoint, type MeanEstimate, meanAgainstGoal, meanLearningCurve, skillScore } from '@agentflow/eval';
import type { SweepRunResult } from './sweep-results';

/** Goals of the robust-learning issue, shown beside the figures. */
export const SWEEP_GOALS = { gainPoints: 15, prmMseReduction: 0.3, stepsRatio: 0.7 } as const;

/** One arm (credit) of a sweep across its seeds. */
export interface SweepArm {
  arm: string;
  runs: SweepRunResult[];
  finished: number;
  /** After minus before, in points, over the finished seeds. */
  gain: MeanEstimate;
  reachedGoal: number;
  /** 1 - PRM MSE / constant MSE, for runs with a PRM. */
  prmReduction: MeanEstimate;
  prmReachedGoal: number;
  /** Mean held-out accuracy at each evaluation step, with its 95% t band over seeds. */
  curve: MeanCurvePoint[];
}

/** Whether process credit reaches outcome credit's final accuracy in fewer steps. */
export interface CreditComparison {
  process: string;
  outcome: string;
  /** Outcome credit's mean final accuracy over seeds, and the first step process credit's mean curve reaches it. */
  outcomeFinal: number;
  processStep: number | null;
  totalSteps: number;
  /** processStep / totalSteps (Infinity when never reached), with a seed-bootstrap 95% interval. */
  ratio: number;
  ratio95: [number, number];
  /** Final accuracy, process minus outcome, in points, paired by seed. */
  finalDifference: MeanEstimate;
}

/** A run's gain in points, after minus before (NaN without a summary). */
export const gainPoints = (run: SweepRunResult) => (run.summary ? 100 * (run.summary.after.accuracy - run.summary.before.accuracy) : Number.NaN);
/** A run's PRM MSE reduction against the constant predictor (NaN without a PRM). */
export const prmReductionOf = (run: SweepRunResult) => (run.summary?.prm ? skillScore(run.summary.prm.mse, run.summary.prm.mse_constant) : Number.NaN);

/** Summarises each arm of a sweep across its seeds. */
export function analyseArm(arm: string, runs: SweepRunResult[]): SweepArm {
  const finished = runs.filter((run) => run.summary);
  const gain = meanAgainstGoal(finished.map(gainPoints), SWEEP_GOALS.gainPoints);
  const prm = meanAgainstGoal(finished.map(prmReductionOf).filter(Number.isFinite), SWEEP_GOALS.prmMseReduction);
  const curve = meanLearningCurve(finished.map((run) => run.curve));
  return { arm, runs, finished: finished.length, gain: gain.estimate, reachedGoal: gain.reached, prmReduction: prm.estimate, prmReachedGoal: prm.reached, curve };
}

/** Compares a process-credit arm with an outcome-credit arm on the seeds both finished (eval's `compareLearningCurvesBySeed`). */
export function compareCredits(process: SweepArm, outcome: SweepArm): CreditComparison | undefined {
  const finished = (arm: SweepArm) => arm.runs.filter((run) => run.summary);
  // 2000 resamples of the seeds from a fixed seed: the sweep's table is the same each time it is rewritten.
  const curves = compareLearningCurvesBySeed(finished(process), finished(outcome), { resamples: 2000, random: createRandom(0).fork('sweep-bootstrap') });
  if (!curves) return undefined;
  const { baselineFinal: outcomeFinal, candidateStep: processStep, totalSteps, ratio, ratio95, finalDifference } = curves;
  return { process: process.arm, outcome: outcome.arm, outcomeFinal, processStep, totalSteps, ratio, ratio95, finalDifference };
}
