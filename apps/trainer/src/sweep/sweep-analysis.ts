import { createRandom } from '@agentflow/core';
import { compareLearningCurves, type MeanCurvePoint, type MeanEstimate, meanLearningCurve, meanWithInterval, skillScore } from '@agentflow/eval';
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

const points = (run: SweepRunResult) => (run.summary ? 100 * (run.summary.after.accuracy - run.summary.before.accuracy) : Number.NaN);
const reductionOf = (run: SweepRunResult) => (run.summary?.prm ? skillScore(run.summary.prm.mse, run.summary.prm.mse_constant) : Number.NaN);

/** Summarises each arm of a sweep across its seeds. */
export function analyseArm(arm: string, runs: SweepRunResult[]): SweepArm {
  const finished = runs.filter((run) => run.summary);
  const gains = finished.map(points);
  const reductions = finished.map(reductionOf).filter(Number.isFinite);
  return {
    arm,
    runs,
    finished: finished.length,
    gain: meanWithInterval(gains),
    reachedGoal: gains.filter((gain) => gain >= SWEEP_GOALS.gainPoints).length,
    prmReduction: meanWithInterval(reductions),
    prmReachedGoal: reductions.filter((reduction) => reduction >= SWEEP_GOALS.prmMseReduction).length,
    curve: meanLearningCurve(runs.filter((run) => run.summary).map((run) => run.curve)),
  };
}

/** Compares a process-credit arm with an outcome-credit arm on the seeds both finished (eval's `compareLearningCurves`). */
export function compareCredits(process: SweepArm, outcome: SweepArm): CreditComparison | undefined {
  const seeds = process.runs
    .filter((run) => run.summary)
    .map((run) => run.seed)
    .filter((seed) => outcome.runs.some((run) => run.seed === seed && run.summary));
  if (seeds.length === 0) return undefined;
  const pick = (arm: SweepArm, seed: number) => arm.runs.find((run) => run.seed === seed)!;
  const totalSteps = pick(process, seeds[0]!).totalSteps;
  const curves = compareLearningCurves(
    seeds.map((seed) => pick(process, seed).curve),
    seeds.map((seed) => pick(outcome, seed).curve),
    // 2000 resamples of the seeds from a fixed seed: the sweep's table is the same each time it is rewritten.
    { totalSteps, resamples: 2000, random: createRandom(0).fork('sweep-bootstrap') },
  );
  return {
    process: process.arm,
    outcome: outcome.arm,
    outcomeFinal: curves.baselineFinal,
    processStep: curves.candidateStep,
    totalSteps,
    ratio: curves.ratio,
    ratio95: curves.ratio95,
    finalDifference: curves.finalDifference,
  };
}
