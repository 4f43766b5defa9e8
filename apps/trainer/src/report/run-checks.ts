import { percent, type RunCheck, skillScore } from '@agentflow/eval';
import type { WarmStartVerdict } from '@agentflow/models';

/** A PRM whose held-out MSE is not at least this much below the constant predictor's carries almost no step signal. */
export const PRM_CHECK_MIN_REDUCTION = 0.1;

/** What the checks read of the stages' recorded results. */
export interface CheckedStages {
  warmStart?: { check?: WarmStartVerdict; heldOutAccuracy?: number | null; finalLoss?: number | null };
  prm?: { mse: number; mse_constant: number };
  /** `saturated`: DAPO stopped because the policy solved nearly every training prompt every time. */
  train?: { steps?: number; stoppedEarly?: string; saturated?: boolean };
  totalSteps: number;
}

/**
 * The checks a run's report shows at its top: the warm start's (what it reached on its check),
 * the PRM against the constant predictor, and whether DAPO ran its whole budget.
 */
export function runChecks(stages: CheckedStages): RunCheck[] {
  const checks: RunCheck[] = [];
  const check = stages.warmStart?.check;
  if (check) {
    const reached = `loss ${check.finalLoss?.toFixed(3) ?? '-'}${check.heldOutAccuracy === null ? '' : `, ${percent(check.heldOutAccuracy)} of the held-back training tasks`}`;
    // A failed check stops the run, so a report only ever shows a passed one.
    checks.push({ name: 'warm-start', ok: check.ok, message: `The warm start passed its check (${reached}).` });
  }
  if (stages.prm) {
    const score = skillScore(stages.prm.mse, stages.prm.mse_constant);
    // Constant held-out labels leave nothing to beat: shown as no reduction.
    const reduction = Number.isFinite(score) ? score : 0;
    checks.push({
      name: 'prm',
      ok: reduction >= PRM_CHECK_MIN_REDUCTION,
      message:
        reduction >= PRM_CHECK_MIN_REDUCTION
          ? `The PRM's held-out MSE is ${percent(reduction)} below the constant predictor's.`
          : `The PRM's held-out MSE is only ${percent(reduction)} below the constant predictor's (check: at least ${percent(PRM_CHECK_MIN_REDUCTION)}): its step scores carry little signal, so process credit here is close to noise.`,
    });
  }
  if (stages.train) {
    checks.push(
      stages.train.stoppedEarly
        ? { name: 'train', ok: stages.train.saturated === true, message: `${stages.train.stoppedEarly} (${stages.train.steps ?? 0} of ${stages.totalSteps} steps ran).` }
        : { name: 'train', ok: true, message: `DAPO ran all ${stages.train.steps ?? stages.totalSteps} of ${stages.totalSteps} steps.` },
    );
  }
  return checks;
}
