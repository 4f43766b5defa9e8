import type { Trajectory } from '@agentflow/core';
import { extractSteps } from '../example/extract-steps';
import { createJudgeLabeller, type JudgeLabellerSettings } from './judge-labeller';
import type { LabelResult } from './label-result';
import { createMonteCarloLabeller, type MonteCarloLabellerSettings } from './monte-carlo-labeller';
import type { JudgeDescription, LabellerDescription, MonteCarloDescription } from './nothing-labelled-error';

/**
 * One way of labelling the steps of trajectories, as `labelTrajectoriesToFile` drives it: a
 * batch at a time, only the steps still pending, then released.
 */
export interface StepLabelling {
  /** Who labels, as a message names it. */
  description: LabellerDescription;
  /** Labels the steps of `batch` that `pending` accepts (those the labels file lacks). */
  label(batch: readonly Trajectory[], pending: (stepId: string) => boolean): Promise<LabelResult>;
  /** Frees what the labeller holds (a planner opened for the completions). */
  release(): Promise<void>;
  /** The labeller's own counts (a judge's calls, cache hits, tokens, cost in USD), for the summary. */
  stats(): Record<string, number>;
}

export interface MonteCarloLabellingSettings extends MonteCarloLabellerSettings {
  /** Completions per step; required here, since the messages name it. */
  samples: number;
  /** How the messages name the labelling (`samples` comes from above). */
  description: Omit<MonteCarloDescription, 'samples'>;
  /** Frees what the completions run on once labelling ends. Default: nothing to free. */
  release?: () => Promise<void>;
}

/**
 * Monte-Carlo labelling (Math-Shepherd) over `createMonteCarloLabeller`: from each step of a
 * trajectory, `samples` completions continue the run; the soft label is the share that reaches
 * the right answer.
 */
export function createMonteCarloLabelling(settings: MonteCarloLabellingSettings): StepLabelling {
  const { description, release, ...labellerSettings } = settings;
  const labeller = createMonteCarloLabeller(labellerSettings);
  return {
    description: { kind: 'monte-carlo', samples: settings.samples, ...description },
    // Whole trajectories: a step labelled before a failure in its trajectory is completed again, and dropped.
    label: async (batch, pending) => {
      const result = await labeller.label(batch);
      return {
        examples: result.examples.filter((example) => pending(example.id)),
        failures: result.failures.filter((failure) => pending(failure.stepId)),
      };
    },
    release: release ?? (async () => {}),
    stats: () => ({}),
  };
}

export interface JudgeLabellingSettings extends JudgeLabellerSettings {
  /** How the messages name the judge. */
  description: JudgeDescription;
}

/**
 * LLM-judge labelling over `createJudgeLabeller`: each pending step as the PRM will read it
 * (never its own tool result), cached and priced as the labeller's settings say.
 */
export function createJudgeLabelling(settings: JudgeLabellingSettings): StepLabelling {
  const { description, ...labellerSettings } = settings;
  const labeller = createJudgeLabeller(labellerSettings);
  return {
    description: { kind: 'judge', ...description },
    label: (batch, pending) => labeller.label(batch.flatMap((trajectory) => extractSteps(trajectory)).filter((step) => pending(step.id))),
    release: async () => {},
    stats: () => ({ ...labeller.stats() }),
  };
}
