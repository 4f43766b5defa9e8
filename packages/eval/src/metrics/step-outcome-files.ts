import { existsSync } from 'node:fs';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { type LabelledTrajectory, type StepOutcomeDisagreement, stepOutcomeDisagreement } from './step-outcome-disagreement';

/** What this reads of a line of a step-labels file (@agentflow/prm's `PrmExample`, as its `labelTrajectoriesToFile` writes them). */
interface LabelRow {
  trajectoryId: string;
  label: number;
  outcomeReward?: number;
  provenance?: { labeller?: string };
}

/** {@link stepOutcomeDisagreement} over the labelled trajectories of a run, and who labelled them. */
export interface CollectedStepOutcome extends StepOutcomeDisagreement {
  /** The labeller of the steps (`monte-carlo`, `judge`), or `mixed` when a resumed run's labels came from more than one. */
  labeller: string;
}

/**
 * Where the outcome broadcast misleads on the collected trajectories: their labelled steps
 * (`labels.jsonl`, keyed to trajectories by `trajectoryId`) grouped per trajectory, with the
 * trajectory's outcome reward from `trajectories.jsonl` (else the one its labels carry).
 * Undefined without labels: no labels file (outcome or GiGPO credit), or an empty one.
 */
export function stepOutcomeOfFiles(paths: { labels: string; trajectories: string }): CollectedStepOutcome | undefined {
  if (!existsSync(paths.labels)) return undefined;
  const labels = readJsonl<LabelRow>(paths.labels);
  if (labels.length === 0) return undefined;
  const outcomes = new Map(
    readJsonl<Trajectory>(paths.trajectories, { allowMissing: true }).flatMap((trajectory) =>
      trajectory.outcomeReward === undefined ? [] : [[trajectory.id, trajectory.outcomeReward] as const],
    ),
  );
  const byTrajectory = new Map<string, LabelledTrajectory & { stepLabels: number[] }>();
  for (const row of labels) {
    const outcome = outcomes.get(row.trajectoryId) ?? row.outcomeReward;
    if (outcome === undefined) continue; // no outcome to compare the steps with
    const entry = byTrajectory.get(row.trajectoryId) ?? { outcome, stepLabels: [] };
    entry.stepLabels.push(row.label);
    byTrajectory.set(row.trajectoryId, entry);
  }
  const labellers = new Set(labels.map((row) => row.provenance?.labeller ?? 'unknown'));
  return { labeller: labellers.size === 1 ? [...labellers][0]! : 'mixed', ...stepOutcomeDisagreement([...byTrajectory.values()]) };
}
