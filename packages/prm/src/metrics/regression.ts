import { AgentFlowError } from '@agentflow/core';

function checkPaired(predictions: ArrayLike<number>, labels: ArrayLike<number>, what: string): void {
  if (predictions.length !== labels.length) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `${what}: ${predictions.length} predictions for ${labels.length} labels; they must pair up one to one.`,
      details: { predictions: predictions.length, labels: labels.length },
    });
  }
  if (labels.length === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${what}: needs at least one label, got none.` });
  }
}

/** Arithmetic mean; NaN for an empty array. */
export function mean(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return values.length === 0 ? Number.NaN : sum / values.length;
}

/** Mean squared error: mean((prediction - label)^2). */
export function meanSquaredError(predictions: ArrayLike<number>, labels: ArrayLike<number>): number {
  checkPaired(predictions, labels, 'meanSquaredError');
  let sum = 0;
  for (let i = 0; i < labels.length; i++) {
    const difference = (predictions[i] as number) - (labels[i] as number);
    sum += difference * difference;
  }
  return sum / labels.length;
}

/**
 * The MSE of the baseline that always predicts `trainingMean` (the mean label of the
 * training set) on the held-out `labels`. A PRM is only useful when it beats this.
 */
export function constantPredictorMse(labels: ArrayLike<number>, trainingMean: number): number {
  return meanSquaredError(Array.from({ length: labels.length }, () => trainingMean), labels);
}

/** Pearson correlation; NaN when either side is constant (the correlation is undefined). */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  checkPaired(x, y, 'pearson');
  const meanX = mean(x);
  const meanY = mean(y);
  let covariance = 0;
  let varianceX = 0;
  let varianceY = 0;
  for (let i = 0; i < x.length; i++) {
    const dx = (x[i] as number) - meanX;
    const dy = (y[i] as number) - meanY;
    covariance += dx * dy;
    varianceX += dx * dx;
    varianceY += dy * dy;
  }
  if (varianceX === 0 || varianceY === 0) return Number.NaN;
  // Rounding can push |r| a hair past 1 for perfectly (anti-)correlated inputs.
  return Math.max(-1, Math.min(1, covariance / Math.sqrt(varianceX * varianceY)));
}

/** 1-based ranks in ascending order; tied values share the average of their ranks. */
export function averageRanks(values: ArrayLike<number>): number[] {
  const order = Array.from({ length: values.length }, (_, i) => i).sort(
    (a, b) => (values[a] as number) - (values[b] as number),
  );
  const ranks = new Array<number>(values.length);
  let start = 0;
  while (start < order.length) {
    let end = start;
    while (end + 1 < order.length && values[order[end + 1] as number] === values[order[start] as number]) end++;
    const rank = (start + end) / 2 + 1;
    for (let k = start; k <= end; k++) ranks[order[k] as number] = rank;
    start = end + 1;
  }
  return ranks;
}

/** Spearman rank correlation: Pearson on average ranks (so ties are handled exactly). */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
  checkPaired(x, y, 'spearman');
  return pearson(averageRanks(x), averageRanks(y));
}
