import { AgentFlowError } from '@agentflow/core';

/** One bin of a calibration plot: the mean predicted score and the mean label of its steps. */
export interface CalibrationBin {
  predicted: number;
  observed: number;
  count: number;
}

/**
 * Held-out labels binned by predicted score: the PRM's calibration plot, where a calibrated
 * PRM's bins lie on the diagonal (observed = predicted). `bins` equal-width bins over [0, 1]
 * (default 5); a score s falls in bin min(bins - 1, floor(s * bins)), so 1 (and above) joins
 * the top bin. Empty bins are left out, the rest come in order of score. Scores are the PRM's
 * sigmoid outputs: a negative or non-finite one is refused (INVALID_ARGUMENT).
 */
export function calibrationBins(scores: readonly number[], labels: readonly number[], bins = 5): CalibrationBin[] {
  if (scores.length !== labels.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `calibrationBins: ${scores.length} scores for ${labels.length} labels; they must pair up one to one.`,
      details: { scores: scores.length, labels: labels.length },
    });
  }
  if (!Number.isInteger(bins) || bins < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `calibrationBins: bins must be a positive integer, got ${bins}.`, details: { bins } });
  }
  const sums = Array.from({ length: bins }, () => ({ predicted: 0, observed: 0, count: 0 }));
  scores.forEach((score, index) => {
    if (!(Number.isFinite(score) && score >= 0)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `calibrationBins: score ${index} is ${score}; a PRM score is a finite number in [0, 1].`,
        details: { index, score },
      });
    }
    const bin = sums[Math.min(bins - 1, Math.floor(score * bins))]!;
    bin.predicted += score;
    bin.observed += labels[index] as number;
    bin.count++;
  });
  return sums
    .filter((bin) => bin.count > 0)
    .map((bin) => ({ predicted: bin.predicted / bin.count, observed: bin.observed / bin.count, count: bin.count }));
}
