import { createRandom } from '@agentflow/core';
import { compareLearningCurvesBySeed, type MeanCurvePoint, meanLearningCurve } from '../statistics/learning-curves';
import { meanAgainstGoal } from '../statistics/goal-estimate';
import { meanWithInterval } from '../statistics/t-interval';
import { skillScore } from '../statistics/skill-score';
import type { MeanEstimate } from '../statistics/t-interval';
import type { SweepRunRecord } from './sweep-run';

/** The goals a sweep counts its runs against and shows beside its figures. */
export interface SweepGoals {
  /** Held-out accuracy gain, after minus before, in points (e.g. 15). */
  gainPoints: number;
  /** PRM MSE reduction against the constant predictor, a fraction (e.g. 0.3). */
  prmMseReduction: number;
  /** Steps process credit may take to reach outcome credit's final accuracy, a fraction of the steps (e.g. 0.7). */
  stepsRatio: number;
}

/** One arm (credit) of a sweep across its seeds. */
export interface SweepArm {
  arm: string;
  runs: SweepRunRecord[];
  finished: number;
  /** After minus before, in points, over the finished seeds. */
  gain: MeanEstimate;
  reachedGoal: number;
  /** 1 - PRM MSE / constant MSE, for runs with a PRM. */
  prmReduction: MeanEstimate;
  prmReachedGoal: number;
  /** Mean planner steps per solved held-out task after training, over the seeds that recorded it. */
  stepsPerSolved: MeanEstimate;
  /** Mean held-out accuracy at each evaluation step, with its 95% t band over seeds. */
  curve: MeanCurvePoint[];
}

/** Whether process credit (or another credit) reaches outcome credit's final accuracy in fewer steps. */
export interface CreditComparison {
  /** The arm compared with outcome credit: a process credit, or any other arm of the sweep. */
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
export const sweepGainPoints = (run: SweepRunRecord) => (run.summary ? 100 * (run.summary.after.accuracy - run.summary.before.accuracy) : Number.NaN);
/** A run's PRM MSE reduction against the constant predictor (`skillScore`; NaN without a PRM). */
export const sweepPrmReduction = (run: SweepRunRecord) => (run.summary?.prm ? skillScore(run.summary.prm.mse, run.summary.prm.mse_constant) : Number.NaN);

/** One arm of a sweep across its seeds: its finished runs' mean gain and PRM MSE reduction against `goals`, and their mean curve. */
export function analyseSweepArm(arm: string, runs: SweepRunRecord[], goals: SweepGoals): SweepArm {
  const finished = runs.filter((run) => run.summary);
  const gain = meanAgainstGoal(finished.map(sweepGainPoints), goals.gainPoints);
  const prm = meanAgainstGoal(finished.map(sweepPrmReduction).filter(Number.isFinite), goals.prmMseReduction);
  const curve = meanLearningCurve(finished.map((run) => run.curve));
  const stepsPerSolved = meanWithInterval(finished.map((run) => run.summary?.after.meanStepsSolved).filter((steps): steps is number => typeof steps === 'number'));
  return { arm, runs, finished: finished.length, gain: gain.estimate, reachedGoal: gain.reached, prmReduction: prm.estimate, prmReachedGoal: prm.reached, stepsPerSolved, curve };
}

/** Compares an arm (a process credit, or another) with an outcome-credit arm on the seeds both finished (`compareLearningCurvesBySeed`); undefined when they share none. */
export function compareSweepCredits(process: SweepArm, outcome: SweepArm): CreditComparison | undefined {
  const finished = (arm: SweepArm) => arm.runs.filter((run) => run.summary);
  // 2000 resamples of the seeds from a fixed seed: the sweep's table is the same each time it is rewritten.
  const curves = compareLearningCurvesBySeed(finished(process), finished(outcome), { resamples: 2000, random: createRandom(0).fork('sweep-bootstrap') });
  if (!curves) return undefined;
  const { baselineFinal: outcomeFinal, candidateStep: processStep, totalSteps, ratio, ratio95, finalDifference } = curves;
  return { process: process.arm, outcome: outcome.arm, outcomeFinal, processStep, totalSteps, ratio, ratio95, finalDifference };
}
