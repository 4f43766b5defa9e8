import { AgentFlowError } from '@agentflow/core';

/** Index of the first value below `threshold`, or -1 when there is none (ProcessBench's "no error"). */
export function firstErrorIndex(values: readonly number[], threshold: number): number {
  return values.findIndex((value) => value < threshold);
}

/** Step labels and predicted step scores of one trajectory, in step order. */
export interface FirstErrorCase {
  labels: number[];
  scores: number[];
}

export interface FirstErrorF1Settings {
  /** A label below this marks the step as erroneous (labels in [0, 1]). */
  labelThreshold: number;
  /** A predicted score below this marks the step as erroneous. */
  scoreThreshold: number;
}

export interface FirstErrorF1Result {
  /** Harmonic mean of the two accuracies below (0 when either is 0). */
  f1: number;
  /** On trajectories with an erroneous step: fraction whose first error is predicted at exactly that step. */
  erroneousAccuracy: number;
  /** On trajectories without one: fraction where no step is predicted erroneous. */
  correctAccuracy: number;
  erroneous: number;
  correct: number;
}

/**
 * First-error F1 as ProcessBench (arXiv 2412.06559) defines it. The reference first error
 * of a trajectory is its first step with label < labelThreshold (-1 when none); the
 * predicted one is its first step with score < scoreThreshold (-1 when none). Trajectories
 * split into an erroneous subset (reference >= 0) and a correct subset (reference = -1);
 * the accuracy on each subset is the fraction with predicted = reference exactly, and the
 * F1 is their harmonic mean. An empty subset has accuracy NaN, and so does the F1.
 */
export function firstErrorF1(cases: readonly FirstErrorCase[], settings: FirstErrorF1Settings): FirstErrorF1Result {
  let erroneous = 0;
  let erroneousHits = 0;
  let correct = 0;
  let correctHits = 0;
  for (const [index, item] of cases.entries()) {
    if (item.labels.length !== item.scores.length) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `firstErrorF1: trajectory ${index} has ${item.labels.length} labels and ${item.scores.length} scores; they must pair up.`,
      });
    }
    const reference = firstErrorIndex(item.labels, settings.labelThreshold);
    const predicted = firstErrorIndex(item.scores, settings.scoreThreshold);
    if (reference >= 0) {
      erroneous++;
      if (predicted === reference) erroneousHits++;
    } else {
      correct++;
      if (predicted === -1) correctHits++;
    }
  }
  const erroneousAccuracy = erroneous === 0 ? Number.NaN : erroneousHits / erroneous;
  const correctAccuracy = correct === 0 ? Number.NaN : correctHits / correct;
  const sum = erroneousAccuracy + correctAccuracy;
  const f1 = Number.isNaN(sum) ? Number.NaN : sum === 0 ? 0 : (2 * erroneousAccuracy * correctAccuracy) / sum;
  return { f1, erroneousAccuracy, correctAccuracy, erroneous, correct };
}
