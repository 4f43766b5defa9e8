import { AgentFlowError, describeValue, type Random, type Trajectory } from '@agentflow/core';
import type { Planner } from '@agentflow/planner';
import { createVerifier, type Verifier } from '@agentflow/verifier';
import { createGenerator, type Generator } from '../generator/generator';
import { type ContinueFlowLimits, continueFlow } from '../loop/continue-flow';
import type { FlowToolSource } from '../tools/flow-tools';

/**
 * Where completions start: a trajectory cut just after one step. The shape of
 * `@agentflow/prm`'s `TrajectoryPrefix` (flow cannot import prm, which depends on flow).
 */
export interface FlowCompletionPrefix {
  /** Steps 0..step.stepIndex (later steps, if present, are ignored). */
  trajectory: Trajectory;
  step: { stepIndex: number };
}

/** What the planner factory gets for one completion. */
export interface FlowCompletionContext {
  /** 0..n-1: which completion of this call. */
  index: number;
  /** This completion's own generator, forked from the one given to `complete`. */
  random: Random;
  /** A 31-bit seed drawn from `random`: pass it to `createPlanner({ seed })` for reproducible sampling. */
  seed: number;
  /** The trajectory being continued. */
  prefix: Trajectory;
}

export interface FlowCompleterSettings extends FlowToolSource {
  /** A planner for one completion, over the current policy (e.g. `createPolicyModel`), seeded from the context. */
  createPlanner(context: FlowCompletionContext): Planner;
  /** Whether a completion reached the right answer; it also gets the completion (question, taskId). */
  isCorrect(answer: string | null, completion: Trajectory): boolean | Promise<boolean>;
  /** Default: the rule verifier with `limits.maxSteps` / `limits.timeLimitMs`. */
  verifier?: Verifier;
  /** Default: `createGenerator()` (the finish input is the answer). */
  generator?: Generator;
  /** Step, time and tool limits of each completion, and `replayTools` (see `continueFlow`). */
  limits?: Omit<ContinueFlowLimits, 'trajectoryId' | 'toolTaskId' | 'signal'>;
  /**
   * The step budget of the trajectory being continued, e.g. its task's own (eval's
   * `TaskItem.maxSteps`), or undefined for none: its completions stop after the smaller of it
   * and `limits.maxSteps` (the verifier's by default), the prefix counted, as the trajectory
   * itself did. Default: no budget of its own.
   */
  maxStepsFor?(trajectory: Trajectory): number | undefined;
  /** Completions run at once (default 8; a policy model batches concurrent calls). */
  concurrency?: number;
  signal?: AbortSignal;
  /** Sees each finished completion, e.g. to keep them as rollouts. */
  onCompletion?(completion: Trajectory, context: FlowCompletionContext): void;
}

/** `complete(prefix, n, random)` as `createMonteCarloLabeller` of `@agentflow/prm` takes it. */
export type FlowCompleter = (prefix: FlowCompletionPrefix, n: number, random: Random) => Promise<boolean[]>;

/**
 * Builds the `complete` function of Monte-Carlo step labelling (Math-Shepherd): `n`
 * independent `continueFlow` runs after `prefix.step.stepIndex`, each with its own planner
 * (seeded from a fork of `random` taken in order, so the outcomes repeat with the seed
 * whatever the scheduling), its own tool task key, and its answer checked by `isCorrect`.
 * Completion i of a trajectory `T` after step j has the id `T:after-j:i`.
 */
export function createFlowCompleter(settings: FlowCompleterSettings): FlowCompleter {
  const concurrency = settings.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `createFlowCompleter: concurrency must be a positive integer, got ${describeValue(concurrency)}.`,
    });
  }
  const limits = settings.limits ?? {};
  const verifier =
    settings.verifier ??
    createVerifier({
      rules: {
        ...(limits.maxSteps === undefined ? {} : { maxSteps: limits.maxSteps }),
        ...(limits.timeLimitMs === undefined ? {} : { timeLimitMs: limits.timeLimitMs }),
      },
    });
  const generator = settings.generator ?? createGenerator();

  return async (prefix, n, random) => {
    if (!Number.isInteger(n) || n < 1) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `complete: n must be a positive integer, got ${describeValue(n)}.` });
    }
    const afterStep = prefix.step.stepIndex;
    const budget = settings.maxStepsFor?.(prefix.trajectory);
    const maxSteps = budget === undefined ? limits.maxSteps : Math.min(budget, limits.maxSteps ?? verifier.maxSteps);
    // Forked before anything runs, in order: completion i's randomness depends only on (random, i).
    const contexts: FlowCompletionContext[] = Array.from({ length: n }, (_, index) => {
      const forked = random.fork(`completion:${index}`);
      return { index, random: forked, seed: forked.nextUint32() >>> 1, prefix: prefix.trajectory };
    });
    const outcomes: boolean[] = new Array(n);
    let next = 0;
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      // After one failure no new completion starts; the running ones end, then it is thrown.
      while (next < n && failure === undefined) {
        const context = contexts[next++]!;
        const trajectoryId = `${prefix.trajectory.id}:after-${afterStep}:${context.index}`;
        // Unique even when the same prefix is completed twice at once.
        const toolTaskId = `${trajectoryId}:${crypto.randomUUID()}`;
        const completion = await continueFlow(
          prefix.trajectory,
          afterStep,
          {
            planner: settings.createPlanner(context),
            ...(settings.registry ? { registry: settings.registry } : { tools: settings.tools ?? [] }),
            verifier,
            generator,
          },
          {
            ...limits,
            ...(maxSteps === undefined ? {} : { maxSteps }),
            trajectoryId,
            toolTaskId,
            ...(settings.signal ? { signal: settings.signal } : {}),
          },
        );
        // A shared registry is the caller's; the completion's task state is not.
        if (settings.registry) await settings.registry.dispose(toolTaskId).catch(() => undefined);
        settings.onCompletion?.(completion, context);
        outcomes[context.index] = Boolean(await settings.isCorrect(completion.answer, completion));
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, () =>
        worker().catch((error: unknown) => {
          failure ??= { error };
        }),
      ),
    );
    if (failure) throw failure.error;
    return outcomes;
  };
}
