import { AgentFlowError, type Random, type Trajectory } from '@agentflow/core';
import PQueue from 'p-queue';
import { extractSteps } from '../example/extract-steps';
import type { PrmExample, PrmStep } from '../example/prm-example';
import type { LabelFailure, LabelResult } from './label-result';

/** A trajectory cut just after one step: where Monte-Carlo completions start from. */
export interface TrajectoryPrefix {
  /** The trajectory with steps 0..step.stepIndex only (tool results included: the policy saw them). */
  trajectory: Trajectory;
  step: PrmStep;
}

/**
 * Runs `n` completions of the policy from a prefix and says, for each, whether it reached
 * the right answer. The trainer wires this to @agentflow/flow with the current policy.
 */
export type CompleteFromPrefix = (prefix: TrajectoryPrefix, n: number, random: Random) => Promise<boolean[]>;

/** Soft: the fraction of completions that succeed. Hard: 1 when any does (Math-Shepherd, arXiv 2312.08935). */
export type MonteCarloLabelKind = 'soft' | 'hard';

export interface MonteCarloLabellerSettings {
  complete: CompleteFromPrefix;
  /** Completions per step. Default 8 (Math-Shepherd samples N = 8). */
  samples?: number;
  /** Which label to keep. Default `soft`, the regression target of the reference PRM. */
  kind?: MonteCarloLabelKind;
  /** Each step gets its own generator forked from this one by step id: labels do not depend on scheduling. */
  random: Random;
  /** Steps being completed at once. Default 4. */
  concurrency?: number;
}

export interface MonteCarloLabeller {
  label(trajectories: readonly Trajectory[], settings?: { onLabelled?: (done: number) => void }): Promise<LabelResult>;
}

/**
 * Creates a Monte-Carlo labeller: from each step, `samples` completions; the label is
 * the fraction that reach the right answer (soft) or whether any does (hard). It measures
 * "can still succeed from here", not "this step is right" (Qwen, arXiv 2501.07301), which
 * is why consensus filtering with a judge exists. A step whose action did not parse gets
 * 0 without completions (the PRM scores format errors 0).
 */
export function createMonteCarloLabeller(settings: MonteCarloLabellerSettings): MonteCarloLabeller {
  const samples = settings.samples ?? 8;
  const kind = settings.kind ?? 'soft';
  const concurrency = settings.concurrency ?? 4;
  for (const [name, value] of [
    ['samples', samples],
    ['concurrency', concurrency],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${name} must be a positive integer, got ${value}.` });
    }
  }
  return {
    async label(trajectories, options = {}) {
      const queue = new PQueue({ concurrency });
      const jobs: { trajectory: Trajectory; step: PrmStep; random: Random }[] = [];
      for (const trajectory of trajectories) {
        for (const step of extractSteps(trajectory)) {
          // Forked in a fixed order before anything runs, so the labels repeat with the seed.
          jobs.push({ trajectory, step, random: settings.random.fork(step.id) });
        }
      }
      const examples: (PrmExample | undefined)[] = new Array(jobs.length);
      const failures: LabelFailure[] = [];
      let done = 0;
      await Promise.all(
        jobs.map(async ({ trajectory, step, random }, index) => {
          try {
            if (step.action === null) {
              examples[index] = { ...step, label: 0, provenance: { labeller: 'monte-carlo', samples: 0, successes: 0 } };
              return;
            }
            const prefix: TrajectoryPrefix = {
              trajectory: { ...trajectory, steps: trajectory.steps.filter((candidate) => candidate.index <= step.stepIndex) },
              step,
            };
            const outcomes = await queue.add(() => settings.complete(prefix, samples, random));
            if (!Array.isArray(outcomes) || outcomes.length !== samples || outcomes.some((value) => typeof value !== 'boolean')) {
              throw new AgentFlowError({
                code: 'RUNTIME_ERROR',
                message: `complete() must return ${samples} booleans for step ${step.id}, got ${JSON.stringify(outcomes)?.slice(0, 80)}.`,
              });
            }
            const successes = outcomes.filter(Boolean).length;
            const label = kind === 'soft' ? successes / samples : successes > 0 ? 1 : 0;
            examples[index] = { ...step, label, provenance: { labeller: 'monte-carlo', samples, successes } };
          } catch (error) {
            failures.push({ stepId: step.id, error: (error as Error).message });
          } finally {
            options.onLabelled?.(++done);
          }
        }),
      );
      return { examples: examples.filter((example) => example !== undefined), failures };
    },
  };
}
