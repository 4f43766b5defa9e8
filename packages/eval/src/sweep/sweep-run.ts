import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LearningCurvePoint } from '../statistics/learning-curves';

/** One run of a sweep: its arm (e.g. a credit), its seed and its directory. */
export interface SweepRunSpec {
  arm: string;
  seed: number;
  dir: string;
}

/** One held-out evaluation as a sweep shows it: the accuracy with its 95% interval (e.g. Wilson's). */
export interface SweepEvaluation {
  accuracy: number;
  ci95: [number, number];
}

/** What a sweep reads of a finished run's summary; a caller's own summary may hold more (it is passed through). */
export interface SweepRunSummary {
  /** Held-out accuracy before training (after the warm start) and after it. */
  before: SweepEvaluation;
  after: SweepEvaluation & {
    /** Mean planner steps of the held-out tasks answered right after training (null or absent: none, or not recorded). */
    meanStepsSolved?: number | null;
  };
  /** The paired test of before against after on the same tasks (McNemar's). */
  paired?: { pValue: number };
  /** The PRM's held-out MSE and the constant predictor's; absent without a PRM (outcome credit). */
  prm?: { mse: number; mse_constant: number };
  durationSeconds?: number;
}

/** One run of a sweep as its table row and curves read it: the caller reads its run directory into this. */
export interface SweepRunRecord extends SweepRunSpec {
  /** Why the run has no summary (it failed, or has not run yet). */
  failure?: string;
  summary?: SweepRunSummary;
  /** Training steps run, of `totalSteps`. */
  steps: number;
  totalSteps: number;
  /** Why training stopped before `totalSteps`. */
  stoppedEarly?: string;
  /** The warm start's final loss and its held-out accuracy, when the run had one. */
  warmStart?: { finalLoss: number | null; heldOutAccuracy: number | null };
  /** Held-out accuracy against training steps, step 0 the planner before training. */
  curve: LearningCurvePoint[];
}

/** The file in a run's directory that records why the run failed; `runSweep` writes it, a new attempt removes it. */
export const SWEEP_FAILURE_FILE = 'failure.txt';

/** Why the run in `dir` failed, as `runSweep` recorded it (trimmed); undefined when it has not failed. */
export function readSweepFailure(dir: string): string | undefined {
  const path = join(dir, SWEEP_FAILURE_FILE);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}
