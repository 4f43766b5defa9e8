import { type MeanEstimate, meanWithInterval, seedBootstrap } from './sweep-statistics';
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
  curve: Array<{ step: number; rollouts: number; accuracy: MeanEstimate }>;
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
const reductionOf = (run: SweepRunResult) =>
  run.summary?.prm && run.summary.prm.mse_constant > 0 ? 1 - run.summary.prm.mse / run.summary.prm.mse_constant : Number.NaN;

/** The mean curve of finished runs over the evaluation steps they share. */
function meanCurve(runs: readonly SweepRunResult[]): SweepArm['curve'] {
  const finished = runs.filter((run) => run.summary && run.curve.length > 0);
  if (finished.length === 0) return [];
  const steps = finished[0]!.curve.map((point) => point.step).filter((step) => finished.every((run) => run.curve.some((point) => point.step === step)));
  return steps.map((step) => {
    const at = finished.map((run) => run.curve.find((point) => point.step === step)!);
    return {
      step,
      rollouts: at.reduce((sum, point) => sum + point.rollouts, 0) / at.length,
      accuracy: meanWithInterval(at.map((point) => point.accuracy)),
    };
  });
}

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
    curve: meanCurve(runs),
  };
}

/** The first step whose mean accuracy reaches `target` (null: never). */
function stepReaching(curves: ReadonlyArray<SweepRunResult['curve']>, target: number): number | null {
  const steps = curves[0]?.map((point) => point.step) ?? [];
  for (const step of steps) {
    const values = curves.map((curve) => curve.find((point) => point.step === step)?.accuracy ?? Number.NaN);
    if (values.reduce((sum, value) => sum + value, 0) / values.length >= target - 1e-12) return step;
  }
  return null;
}

/**
 * Compares a process-credit arm with an outcome-credit arm on the seeds both finished:
 * outcome's mean final accuracy, the first step at which process credit's mean curve reaches
 * it, that step as a fraction of the budget, and a bootstrap interval over seeds (the two
 * arms of a seed resampled together).
 */
export function compareCredits(process: SweepArm, outcome: SweepArm): CreditComparison | undefined {
  const seeds = process.runs
    .filter((run) => run.summary)
    .map((run) => run.seed)
    .filter((seed) => outcome.runs.some((run) => run.seed === seed && run.summary));
  if (seeds.length === 0) return undefined;
  const pick = (arm: SweepArm, seed: number) => arm.runs.find((run) => run.seed === seed)!;
  const processCurves = seeds.map((seed) => pick(process, seed).curve);
  const outcomeCurves = seeds.map((seed) => pick(outcome, seed).curve);
  const totalSteps = pick(process, seeds[0]!).totalSteps;
  const final = (curves: ReadonlyArray<SweepRunResult['curve']>) => curves.reduce((sum, curve) => sum + (curve.at(-1)?.accuracy ?? 0), 0) / curves.length;
  const ratioOf = (indices: readonly number[]) => {
    const step = stepReaching(indices.map((i) => processCurves[i]!), final(indices.map((i) => outcomeCurves[i]!)));
    return step === null ? Number.POSITIVE_INFINITY : step / totalSteps;
  };
  const all = seeds.map((_, index) => index);
  const outcomeFinal = final(outcomeCurves);
  const processStep = stepReaching(processCurves, outcomeFinal);
  return {
    process: process.arm,
    outcome: outcome.arm,
    outcomeFinal,
    processStep,
    totalSteps,
    ratio: ratioOf(all),
    ratio95: seedBootstrap(seeds.length, ratioOf),
    finalDifference: meanWithInterval(seeds.map((seed) => 100 * ((pick(process, seed).curve.at(-1)?.accuracy ?? 0) - (pick(outcome, seed).curve.at(-1)?.accuracy ?? 0)))),
  };
}
