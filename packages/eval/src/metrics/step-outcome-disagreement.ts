import { AgentFlowError } from '@agentflow/core';

/** One trajectory as this metric reads it: its outcome reward and its steps' labels. */
export interface LabelledTrajectory {
  /** The outcome reward (1 right, 0 wrong); at least `successThreshold` counts as a success. */
  outcome: number;
  /** One label per labelled step, e.g. the Monte-Carlo share of completions that succeed; at least `goodThreshold` is a good step. */
  stepLabels: readonly number[];
}

export interface StepOutcomeDisagreementSettings {
  /** A step labelled at least this is good, below it bad. Default 0.5. */
  goodThreshold?: number;
  /** An outcome at least this is a success. Default 0.5 (a reward of 1 or 0). */
  successThreshold?: number;
}

/**
 * Where the outcome broadcast and step labels disagree. The shares are null when no
 * trajectory of that outcome has a labelled step (JSON keeps null; it would drop undefined).
 */
export interface StepOutcomeDisagreement {
  /** Successful trajectories with at least one labelled step. */
  successful: number;
  /** Failed trajectories with at least one labelled step. */
  failed: number;
  /** Share of `successful` with at least one bad step: where outcome credit rewards a bad step. */
  successfulWithBadStep: number | null;
  /** Share of `failed` with at least one good step: where outcome credit penalises a good step. */
  failedWithGoodStep: number | null;
}

/**
 * How often the outcome misleads about single steps: the share of successful trajectories
 * that hold a step their labels call bad, and of failed ones that hold a good step. Zero for
 * both means step credit can differ from the outcome broadcast only through noise.
 * Trajectories without labelled steps are left out.
 */
export function stepOutcomeDisagreement(
  trajectories: readonly LabelledTrajectory[],
  settings: StepOutcomeDisagreementSettings = {},
): StepOutcomeDisagreement {
  const { goodThreshold = 0.5, successThreshold = 0.5 } = settings;
  for (const [name, value] of [
    ['goodThreshold', goodThreshold],
    ['successThreshold', successThreshold],
  ] as const) {
    if (!Number.isFinite(value)) throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `stepOutcomeDisagreement's ${name} must be a finite number, got ${String(value)}.` });
  }
  let successful = 0;
  let failed = 0;
  let successfulWithBadStep = 0;
  let failedWithGoodStep = 0;
  for (const { outcome, stepLabels } of trajectories) {
    if (stepLabels.length === 0) continue;
    if (outcome >= successThreshold) {
      successful++;
      if (stepLabels.some((label) => label < goodThreshold)) successfulWithBadStep++;
    } else {
      failed++;
      if (stepLabels.some((label) => label >= goodThreshold)) failedWithGoodStep++;
    }
  }
  return {
    successful,
    failed,
    successfulWithBadStep: successful === 0 ? null : successfulWithBadStep / successful,
    failedWithGoodStep: failed === 0 ? null : failedWithGoodStep / failed,
  };
}
