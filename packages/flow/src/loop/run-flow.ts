import {
  AgentFlowError,
  type PlannerAction,
  type RunEvent,
  type RunEventListener,
  type Step,
  type Termination,
  type Trajectory,
  trajectorySchema,
} from '@agentflow/core';
import { createDeadline } from '@agentflow/llm';
import { createInTaskMemory, type InTaskMemory } from '@agentflow/memory';
import type { Planner } from '@agentflow/planner';
import type { Verifier } from '@agentflow/verifier';
import type { Generator } from '../generator/generator';
import { type FlowToolSource, flowToolRegistry } from '../tools/flow-tools';
import { memoryEntryOf } from './memory-entry';
import { terminationOf } from './termination';

/**
 * The parts of the agent. Tools come as core `Tool`s (`tools`, wrapped in an executor
 * registry for the run) or as a prepared `@agentflow/executor` `registry`.
 */
export interface FlowModules extends FlowToolSource {
  planner: Planner;
  verifier: Verifier;
  generator: Generator;
  listener?: RunEventListener;
  /** Solved examples from cross-task memory, already rendered for the prompt. */
  examples?: string;
}

export interface FlowLimits {
  /** Steps in the whole trajectory (a continued prefix included). Default: the verifier's `maxSteps`. */
  maxSteps?: number;
  /**
   * Wall-clock budget of the whole run, the generator's answer included: one deadline whose
   * signal every planner, tool, verifier and generator call gets (the HTTP models end their
   * retries and waits by it). Any positive length; default: the verifier's `timeLimitMs`.
   */
  timeLimitMs?: number;
  /** Per tool call, when `tools` are given (default 60 s, the executor registry's). */
  toolTimeoutMs?: number;
  /** Character budget of the memory text given to the verifier (default 4000). */
  verifierMemoryChars?: number;
  /** Cancels the run; the partial trajectory is returned with termination "error". */
  signal?: AbortSignal;
  /** The task's id in its data set; recorded on the trajectory. */
  taskId?: string;
  trajectoryId?: string;
  /** Key of per-task tool state (the python REPL). Default: `taskId`, else the trajectory id. */
  toolTaskId?: string;
  /** Milliseconds, for timings (default performance.now). */
  now?: () => number;
  /** Wall-clock date of the start (default new Date()). */
  date?: () => Date;
}

/** Where a run starts: after a prefix of steps taken earlier (see `continueFlow`). */
export interface FlowStart {
  /** Steps 0..j, recorded verbatim and put in memory; their tools are not run again. */
  steps: readonly Step[];
  /** Tools whose prefix calls are re-run silently (outputs dropped) to rebuild their per-task state. */
  replayTools: readonly string[];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when the prefix already ended the run by itself: only the answer is left to write. */
function prefixFinished(steps: readonly Step[]): PlannerAction | null | undefined {
  const last = steps[steps.length - 1];
  if (last?.action?.action === 'finish') return last.action;
  return last?.verdict?.stop && last.verdict.reason === 'llm_stop' ? null : undefined;
}

/**
 * Runs the planner -> executor -> verifier loop on `question`, then the generator.
 * Tool failures are recorded on their step and the loop goes on; a planner or verifier
 * failure (an unreachable model) ends it with termination "error". Never throws for a
 * failure inside the run; the returned trajectory is validated by `trajectorySchema`.
 */
export function runFlow(question: string, modules: FlowModules, limits: FlowLimits = {}): Promise<Trajectory> {
  return runFlowFrom(question, modules, limits, { steps: [], replayTools: [] });
}

/** `runFlow` after a prefix of earlier steps: the shared loop of `runFlow` and `continueFlow`. */
export async function runFlowFrom(
  question: string,
  modules: FlowModules,
  limits: FlowLimits,
  start: FlowStart,
): Promise<Trajectory> {
  const now = limits.now ?? (() => performance.now());
  const started = now();
  const startedAt = (limits.date ?? (() => new Date()))().toISOString();
  const trajectoryId = limits.trajectoryId ?? crypto.randomUUID();
  const taskId = limits.toolTaskId ?? limits.taskId ?? trajectoryId;
  const maxSteps = limits.maxSteps ?? modules.verifier.maxSteps;
  const timeLimitMs = limits.timeLimitMs ?? modules.verifier.timeLimitMs;
  const emit = (event: RunEvent) => {
    try {
      modules.listener?.(event);
    } catch {
      // A broken progress display must not break the run.
    }
  };
  const { registry, owned } = flowToolRegistry(modules, {
    ...(limits.toolTimeoutMs ? { timeoutMs: limits.toolTimeoutMs } : {}),
    now,
  });
  const deadline = createDeadline({ timeLimitMs, parent: limits.signal, what: "the run's time limit" });
  const { signal } = deadline;
  // A caller's signal that aborts with a TIMEOUT reason (its own deadline) ends the run as a timeout, not a cancellation.
  const timedOut = () => deadline.expired() || AgentFlowError.hasCode(limits.signal?.reason, 'TIMEOUT');
  const cancelled = () => Boolean(limits.signal?.aborted) && !timedOut();
  const memory: InTaskMemory = createInTaskMemory(question, start.steps.map(memoryEntryOf));
  const steps: Step[] = [...start.steps];
  let termination: Termination | undefined;
  let error: string | undefined;
  let finishInput: PlannerAction['action_input'] | undefined;
  const finished = prefixFinished(start.steps);
  if (finished !== undefined) {
    termination = 'finished';
    if (finished) finishInput = finished.action_input;
  }
  // After a planner or verifier model failed for good, asking the generator would fail the same way.
  let modelFailed = false;

  const interrupted = (): boolean => {
    if (cancelled()) {
      termination = 'error';
      error = 'Cancelled.';
      return true;
    }
    if (timedOut()) {
      termination = 'timeout';
      return true;
    }
    return false;
  };

  try {
    // Rebuild stateful tools' state (python variables) in this run's fresh task; nothing is recorded.
    for (const step of start.steps) {
      if (termination !== undefined || interrupted()) break;
      const action = step.action;
      if (!action || !start.replayTools.includes(action.action) || !registry.has(action.action)) continue;
      await registry.execute({ tool: action.action, input: action.action_input }, { taskId, signal });
    }
    for (let index = start.steps.length; index < maxSteps && termination === undefined; index++) {
      if (interrupted()) break;
      emit({ type: 'step-start', trajectoryId, index });
      const plannerStart = now();
      let decision: Awaited<ReturnType<Planner['decide']>>;
      try {
        decision = await modules.planner.decide({
          question,
          memory,
          stepIndex: index,
          maxSteps,
          signal,
          ...(modules.examples ? { examples: modules.examples } : {}),
        });
      } catch (caught) {
        if (!interrupted()) {
          termination = 'error';
          error = `Planner failed: ${messageOf(caught)}`;
          modelFailed = true;
        }
        break;
      }
      const plannerMs = now() - plannerStart;
      const { action } = decision;
      const step: Step = {
        index,
        prompt: decision.prompt,
        completion: decision.completion,
        ...(decision.promptTokenIds ? { promptTokenIds: decision.promptTokenIds } : {}),
        ...(decision.completionTokenIds ? { completionTokenIds: decision.completionTokenIds } : {}),
        ...(decision.completionLogprobs ? { completionLogprobs: decision.completionLogprobs } : {}),
        ...(decision.policyVersion === undefined ? {} : { policyVersion: decision.policyVersion }),
        truncated: decision.truncated,
        action,
        ...(decision.parseError === undefined ? {} : { parseError: decision.parseError }),
        timings: { plannerMs, toolMs: 0, verifierMs: 0 },
      };
      if (action && action.action !== 'finish') {
        const toolStart = now();
        const result = await registry.execute({ tool: action.action, input: action.action_input }, { taskId, signal });
        step.toolResult = result;
        step.timings.toolMs = now() - toolStart;
        emit({ type: 'tool-result', trajectoryId, index, tool: action.action, result });
      }
      memory.record(memoryEntryOf(step));
      const verifierStart = now();
      if (interrupted()) {
        if (termination === 'timeout') step.verdict = { stop: true, reason: 'timeout' };
      } else {
        try {
          step.verdict = await modules.verifier.verify({
            question,
            steps: [...steps, step],
            elapsedMs: now() - started,
            ...(modules.verifier.needsMemoryText
              ? { memoryText: memory.render({ budgetChars: limits.verifierMemoryChars ?? 4000, style: 'full' }) }
              : {}),
            signal,
          });
        } catch (caught) {
          if (!interrupted()) {
            termination = 'error';
            error = `Verifier failed: ${messageOf(caught)}`;
            modelFailed = true;
          }
        }
      }
      step.timings.verifierMs = now() - verifierStart;
      if (step.verdict) emit({ type: 'verdict', trajectoryId, index, verdict: step.verdict });
      steps.push(step);
      emit({ type: 'step-end', trajectoryId, step });
      if (termination === undefined && step.verdict?.stop) {
        ({ termination, error } = terminationOf(step.verdict.reason));
        if (step.verdict.reason === 'finish_action' && action) finishInput = action.action_input;
      }
    }
  } catch (caught) {
    deadline.dispose();
    throw caught;
  }
  termination ??= 'max_steps';

  // The generator runs under the run's deadline too: past it, a finish input still answers
  // and a model is not asked.
  let answer: string | null = null;
  if (!cancelled() && !modelFailed) {
    try {
      answer = await modules.generator.generate({
        question,
        memory,
        ...(finishInput === undefined ? {} : { finishInput }),
        signal,
      });
    } catch (caught) {
      if (!timedOut()) {
        error = [error, `Generator failed: ${messageOf(caught)}`].filter(Boolean).join(' ');
        if (termination === 'finished') termination = 'error';
      } else termination = 'timeout';
    }
  }
  deadline.dispose();
  if (termination === 'timeout' && answer === null) {
    const count = `${steps.length} step${steps.length === 1 ? '' : 's'}`;
    // The reason names the limit that ran out: "the run's time limit (20 s) ran out."
    const reason = AgentFlowError.isInstance(signal.reason) ? signal.reason.message.replace(/\.$/, '') : "the run's time limit ran out";
    error ??= `${reason.charAt(0).toUpperCase()}${reason.slice(1)} after ${count}, before an answer was written.`;
  }
  if (owned) await registry.dispose(taskId);

  return trajectorySchema.parse({
    id: trajectoryId,
    ...(limits.taskId ? { taskId: limits.taskId } : {}),
    question,
    steps,
    answer,
    termination,
    ...(error === undefined ? {} : { error }),
    startedAt,
    durationMs: Math.max(0, now() - started),
  });
}
