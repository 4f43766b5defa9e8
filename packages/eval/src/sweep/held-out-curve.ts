import { AgentFlowError } from '@agentflow/core';
import { accuracy } from '../metrics/accuracy';
import type { LearningCurvePoint } from '../statistics/learning-curves';

/** What {@link heldOutAccuracyCurve} reads of one training run. */
export interface HeldOutCurveSettings {
  /** The run's planned training steps, and how often it evaluated (0: only before and after). */
  totalSteps: number;
  evaluateEvery: number;
  /** Rollouts per generated group, and the groups a step generates when its row does not say. */
  groupSize: number;
  groupsPerStep: number;
  /** Verdicts on the evaluation tasks before training and after it, in task order (cut to `evaluationTasks`). */
  before: readonly boolean[];
  after: readonly boolean[];
  evaluationTasks: number;
  /** The training steps that ran, with the groups each generated (dynamic sampling may generate more). */
  trainSteps: ReadonlyArray<{ step: number; groupsGenerated?: number | string | undefined }>;
  /** The evaluations during training: accuracy on the same tasks and sampling seeds. */
  evaluations: ReadonlyArray<{ step: number; accuracy: number }>;
}

/** Accuracy of verdicts; NaN (no point on the curve) when there are none. */
const fraction = (correct: readonly boolean[]) => (correct.length === 0 ? Number.NaN : accuracy(correct).estimate);

/**
 * A run's held-out accuracy against its training steps and rollouts: step 0 is `before`, the
 * last point (at `totalSteps`) is `after`, and the evaluations during training lie between. A
 * run that stopped early keeps its final accuracy at every later evaluation step (its planner no
 * longer changes). Rollouts are the generated groups times the group size, summed over steps.
 */
export function heldOutAccuracyCurve(settings: HeldOutCurveSettings): LearningCurvePoint[] {
  const { totalSteps, evaluateEvery, evaluationTasks } = settings;
  if (!Number.isInteger(totalSteps) || totalSteps < 0 || !Number.isInteger(evaluateEvery) || evaluateEvery < 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `heldOutAccuracyCurve: totalSteps and evaluateEvery must be non-negative integers, got ${totalSteps} and ${evaluateEvery}.` });
  }
  const rolloutsAt = new Map<number, number>();
  let rollouts = 0;
  for (const row of [...settings.trainSteps].sort((a, b) => a.step - b.step)) {
    rollouts += Number(row.groupsGenerated ?? settings.groupsPerStep) * settings.groupSize;
    rolloutsAt.set(row.step, rollouts);
  }
  const lastStep = Math.max(0, ...rolloutsAt.keys());
  const curve: LearningCurvePoint[] = [{ step: 0, rollouts: 0, accuracy: fraction(settings.before.slice(0, evaluationTasks)) }];
  for (const row of settings.evaluations) {
    if (row.step < totalSteps && row.step <= lastStep) curve.push({ step: row.step, rollouts: rolloutsAt.get(row.step) ?? rollouts, accuracy: row.accuracy });
  }
  const after = fraction(settings.after.slice(0, evaluationTasks));
  if (evaluateEvery > 0) for (let step = (Math.floor(lastStep / evaluateEvery) + 1) * evaluateEvery; step < totalSteps; step += evaluateEvery) curve.push({ step, rollouts, accuracy: after });
  curve.push({ step: totalSteps, rollouts, accuracy: after });
  return curve;
}
