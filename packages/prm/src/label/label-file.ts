import { existsSync } from 'node:fs';
import { AgentFlowError, appendJsonl, readJsonl, type Trajectory, writeFileAtomic } from '@agentflow/core';
import { extractSteps } from '../example/extract-steps';
import type { PrmExample } from '../example/prm-example';
import { type CollectedSteps, type CollectedStepsAdvice, collectedSteps, nothingCollectedError } from './collected-steps';
import type { LabelFailure } from './label-result';
import { type LabellerDescription, nothingLabelledError } from './nothing-labelled-error';
import type { StepLabelling } from './step-labelling';

/** What the summary file holds; `labelTrajectoriesToFile`'s result when it finishes. */
export interface LabelSummary {
  labeller: LabellerDescription['kind'];
  /** The trajectories given to label and their planner steps. */
  trajectories: number;
  steps: number;
  /** Steps whose completion did not parse: labelled 0 without a judge or completions, skipped by the PRM. */
  formatErrors: number;
  /** Lines of the labels file, and those the PRM learns from (a parsed action). */
  labelled: number;
  usable: number;
  /** Steps this session could not label, and the first few of them with why. */
  failures: number;
  failureSample: string[];
  meanLabel: number;
  /** The labeller's own counts: for a judge, its calls, cache hits, tokens and cost in USD. */
  stats: Record<string, number>;
  /** Why the labelling stopped, when it did: the error it ended with. */
  stopped?: string;
}

export interface LabelTrajectoriesSettings {
  /** The trajectories to label, in order. */
  trajectories: readonly Trajectory[];
  /** The labeller's kind, which the summary names even when the labelling is never opened. */
  labeller: LabellerDescription['kind'];
  /**
   * Opens the labelling, once, after the trajectories are found to hold a step to learn from
   * (a Monte-Carlo labelling opens a planner: nothing is opened for trajectories of no use).
   */
  openLabelling: () => StepLabelling | Promise<StepLabelling>;
  /** The labels, one `PrmExample` a line, appended per batch; a step it holds is not labelled again. */
  labelsPath: string;
  /** Where the `LabelSummary` is written (atomically) when the labelling finishes or stops. */
  summaryPath: string;
  /** Prefixes the messages. Default `label`. */
  stage?: string;
  /** What the error names when the trajectories hold no step to learn from. */
  advice: CollectedStepsAdvice;
  /** What to do once the labeller is fixed: the end of the error when it labelled nothing usable, e.g. `resume: ...`. */
  resumeHint: string;
  /** Trajectories per append: a kill loses at most one batch of work. Default 8. */
  batchSize?: number;
  /** Trajectories done of all: once the pending steps are known, then after each batch. */
  onProgress?: (progress: { completed: number; total: number }) => void;
}

function summarise(
  labeller: LabelSummary['labeller'],
  found: CollectedSteps,
  examples: readonly PrmExample[],
  failures: readonly string[],
  stats: Record<string, number>,
): LabelSummary {
  return {
    labeller,
    trajectories: found.trajectories,
    steps: found.steps,
    formatErrors: found.formatErrors,
    labelled: examples.length,
    usable: examples.filter((example) => example.action !== null).length,
    failures: failures.length,
    failureSample: failures.slice(0, 5),
    meanLabel: examples.reduce((sum, example) => sum + example.label, 0) / Math.max(1, examples.length),
    stats,
  };
}

/**
 * Labels the steps of `trajectories` into `labelsPath`, appended per batch of trajectories, so
 * a second call with the same files (after a kill, or a fixed labeller) labels only the steps
 * still missing. Stops with an `AgentFlowError` naming the cause and what to change when a PRM
 * would have nothing to learn from: no planner step, only format errors (before the labelling
 * is opened), or a labeller that labelled no usable step. The labels file (possibly empty) and
 * the summary are written either way; the summary is returned when the labelling finishes.
 */
export async function labelTrajectoriesToFile(settings: LabelTrajectoriesSettings): Promise<LabelSummary> {
  const { trajectories, labelsPath, stage = 'label', batchSize = 8 } = settings;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `batchSize must be a positive integer, got ${batchSize}.` });
  }
  // A later reader or a second call finds an empty file, never a missing one.
  if (!existsSync(labelsPath)) writeFileAtomic(labelsPath, '');
  const found = collectedSteps(trajectories);
  const write = (summary: LabelSummary) => writeFileAtomic(settings.summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
  const useless = nothingCollectedError(stage, found, settings.advice);
  if (useless) {
    write({ ...summarise(settings.labeller, found, readJsonl<PrmExample>(labelsPath), [], {}), stopped: useless.message });
    throw useless;
  }
  const done = new Set(readJsonl<PrmExample>(labelsPath).map((example) => example.id));
  const pending = (stepId: string) => !done.has(stepId);
  const todo = trajectories.filter((trajectory) => extractSteps(trajectory).some((step) => pending(step.id)));
  const labelling = await settings.openLabelling();
  let completed = trajectories.length - todo.length;
  const failures: LabelFailure[] = [];
  settings.onProgress?.({ completed, total: trajectories.length });
  try {
    for (let start = 0; start < todo.length; start += batchSize) {
      const batch = todo.slice(start, start + batchSize);
      const result = await labelling.label(batch, pending);
      failures.push(...result.failures);
      appendJsonl(labelsPath, result.examples);
      completed += batch.length;
      settings.onProgress?.({ completed, total: trajectories.length });
    }
  } finally {
    await labelling.release();
  }
  const described = failures.map((failure) => `${failure.stepId}: ${failure.error}`);
  const summary = summarise(settings.labeller, found, readJsonl<PrmExample>(labelsPath), described, labelling.stats());
  if (summary.usable === 0) {
    const error = nothingLabelledError(stage, labelling.description, failures, settings.resumeHint);
    write({ ...summary, stopped: error.message });
    throw error;
  }
  write(summary);
  return summary;
}
