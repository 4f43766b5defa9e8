import { AgentFlowError } from '@agentflow/core';
import { bootstrapInterval, type BootstrapSettings } from './bootstrap';
import { type MeanEstimate, mean, meanWithInterval } from './t-interval';

/** One held-out evaluation of a training run: the accuracy after `step` steps, `rollouts` rollouts spent. */
export interface LearningCurvePoint {
  step: number;
  rollouts: number;
  accuracy: number;
}

/** A run's evaluations in step order. */
export type LearningCurve = readonly LearningCurvePoint[];

/** One point of a mean curve over seeds. */
export interface MeanCurvePoint {
  step: number;
  /** Mean rollouts spent by that step. */
  rollouts: number;
  /** Mean accuracy with its 95% t interval over the seeds. */
  accuracy: MeanEstimate;
}

/**
 * The mean learning curve of several runs (one per seed) over the steps they all evaluated,
 * with a 95% Student-t band across seeds at each step. Empty curves are left out.
 */
export function meanLearningCurve(curves: readonly LearningCurve[]): MeanCurvePoint[] {
  const evaluated = curves.filter((curve) => curve.length > 0);
  const first = evaluated[0];
  if (!first) return [];
  const shared = first.map((point) => point.step).filter((step) => evaluated.every((curve) => curve.some((point) => point.step === step)));
  return shared.map((step) => {
    const at = evaluated.map((curve) => curve.find((point) => point.step === step)!); // [seeds]
    return { step, rollouts: mean(at.map((point) => point.rollouts)), accuracy: meanWithInterval(at.map((point) => point.accuracy)) };
  });
}

/**
 * The first step of the first curve at which the mean accuracy of `curves` (one per seed,
 * NaN where a curve lacks the step) reaches `target`, up to 1e-12 (null: never).
 */
export function stepToReach(curves: readonly LearningCurve[], target: number): number | null {
  for (const { step } of curves[0] ?? []) {
    const accuracies = curves.map((curve) => curve.find((point) => point.step === step)?.accuracy ?? Number.NaN);
    if (mean(accuracies) >= target - 1e-12) return step;
  }
  return null;
}

/** How fast a candidate's curves reach a baseline's final accuracy, seed by seed. */
export interface LearningCurveComparison {
  /** The baseline's mean final accuracy over the seeds. */
  baselineFinal: number;
  /** The first step at which the candidate's mean curve reaches `baselineFinal` (null: never). */
  candidateStep: number | null;
  /** candidateStep / totalSteps; Infinity when never reached. */
  ratio: number;
  /** 95% bootstrap percentile interval of `ratio`, resampling seeds (a seed's two runs together). */
  ratio95: [number, number];
  /** Final accuracy, candidate minus baseline, in percentage points, paired by seed, with its 95% t interval. */
  finalDifference: MeanEstimate;
}

/**
 * Compares two arms of a sweep on the seeds both finished: `candidate[i]` and `baseline[i]`
 * are the curves of seed i (two runs of one seed share their warm start, so seeds are the
 * bootstrap's unit). Does the candidate reach the baseline's final accuracy in fewer steps?
 */
export function compareLearningCurves(
  candidate: readonly LearningCurve[],
  baseline: readonly LearningCurve[],
  settings: BootstrapSettings & { totalSteps: number },
): LearningCurveComparison {
  if (candidate.length === 0 || candidate.length !== baseline.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `compareLearningCurves needs the curves of the same seeds from both arms, got ${candidate.length} and ${baseline.length}.`,
      details: { candidate: candidate.length, baseline: baseline.length },
    });
  }
  const finalOf = (curve: LearningCurve) => curve.at(-1)?.accuracy ?? 0;
  const ratioOf = (seeds: readonly number[]) => {
    const step = stepToReach(
      seeds.map((seed) => candidate[seed]!),
      mean(seeds.map((seed) => finalOf(baseline[seed]!))),
    );
    return step === null ? Number.POSITIVE_INFINITY : step / settings.totalSteps;
  };
  const baselineFinal = mean(baseline.map(finalOf));
  const candidateStep = stepToReach(candidate, baselineFinal);
  return {
    baselineFinal,
    candidateStep,
    ratio: ratioOf(candidate.map((_, seed) => seed)),
    ratio95: bootstrapInterval(candidate.length, ratioOf, settings),
    finalDifference: meanWithInterval(candidate.map((curve, seed) => 100 * (finalOf(curve) - finalOf(baseline[seed]!)))),
  };
}

/** One seed's run of an arm: the seed, its learning curve and the training steps it was given. */
export interface SeededLearningCurve {
  seed: number;
  curve: LearningCurve;
  totalSteps: number;
}

/** {@link LearningCurveComparison} over the seeds both arms have, with those seeds and the steps the ratio divides by. */
export interface SeedPairedComparison extends LearningCurveComparison {
  /** The seeds both arms have, in the candidate's order. */
  seeds: number[];
  /** The training steps of the candidate's run of the first of `seeds` (the runs of a sweep share them). */
  totalSteps: number;
}

/**
 * {@link compareLearningCurves} on the seeds both arms have (each arm's runs as it gives them,
 * e.g. its finished ones): a seed's candidate run is paired with the baseline's run of the same
 * seed. Undefined when no seed is in both.
 */
export function compareLearningCurvesBySeed(
  candidate: readonly SeededLearningCurve[],
  baseline: readonly SeededLearningCurve[],
  settings: BootstrapSettings = {},
): SeedPairedComparison | undefined {
  const paired = candidate.flatMap((run) => {
    const other = baseline.find((base) => base.seed === run.seed);
    return other ? [{ run, other }] : [];
  });
  const first = paired[0];
  if (!first) return undefined;
  const totalSteps = first.run.totalSteps;
  const comparison = compareLearningCurves(
    paired.map(({ run }) => run.curve),
    paired.map(({ other }) => other.curve),
    { ...settings, totalSteps },
  );
  return { ...comparison, seeds: paired.map(({ run }) => run.seed), totalSteps };
}
