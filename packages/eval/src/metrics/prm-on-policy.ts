import type { MetricsRow } from '@agentflow/core';

/** Steps averaged at each end of DAPO. */
const WINDOW = 5;

interface Fit {
  mse: number;
  constant: number;
}

/** The PRM's fit to DAPO's own rollouts at the start and at the end of training. */
export interface PrmOnPolicy {
  steps: number;
  first: Fit;
  last: Fit;
}

const meanFit = (rows: readonly Fit[]): Fit => ({
  mse: rows.reduce((sum, row) => sum + row.mse, 0) / rows.length,
  constant: rows.reduce((sum, row) => sum + row.constant, 0) / rows.length,
});

/**
 * Whether the PRM went stale as DAPO moved the policy, from `metrics.jsonl`: the mean over the
 * first and over the last five DAPO steps of its squared error on each rollout's last decision
 * against the outcome (dapo's `prmOutcomeMse`) and of the constant predictor's. Undefined when
 * DAPO ran without step scores.
 */
export function prmOnPolicy(metrics: readonly MetricsRow[]): PrmOnPolicy | undefined {
  const fits = metrics.flatMap((row) =>
    row.stage === 'train' && typeof row.prmOutcomeMse === 'number' && typeof row.prmOutcomeMseConstant === 'number'
      ? [{ mse: row.prmOutcomeMse, constant: row.prmOutcomeMseConstant }]
      : [],
  );
  if (fits.length === 0) return undefined;
  return { steps: fits.length, first: meanFit(fits.slice(0, WINDOW)), last: meanFit(fits.slice(-WINDOW)) };
}
