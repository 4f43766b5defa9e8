import { AgentFlowError } from '@agentflow/core';
import { longestDemonstration } from '@agentflow/eval';
import { type ChatEndpoint, type ChatEndpointProbe, probeChatEndpoint } from '@agentflow/llm';
import type { RunConfig } from '../config/schema';
import type { GuardedTaskSource } from './pipeline-context';

/** A setting the schema accepts but the pipeline cannot run, with the reason and the key. */
export interface PreflightProblem {
  /** Key path of the setting, e.g. `policy.maxSteps`. */
  key: string;
  message: string;
}

/**
 * What the pipeline cannot run although every value is valid on its own, found from the
 * task source before any stage: demonstrations longer than `policy.maxSteps` (the warm start's
 * replay would stop before its finish step, and no task could be solved), a warm-start check
 * that holds back every training task, an empty training or test split.
 */
export function preflightProblems(config: RunConfig, guarded: GuardedTaskSource): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  const train = guarded.source.split('train');
  if (train.length === 0) {
    problems.push({ key: 'task', message: `the training split is empty (after the leakage guard dropped ${guarded.leakage.dropped.length} item(s)); collect would yield no steps to label` });
  }
  if (guarded.source.split('test').length === 0) problems.push({ key: 'task', message: 'the test split is empty; nothing could be evaluated' });
  // The warm start's own demonstrations (none from benchmark files): the same ones whenever asked.
  const longest = longestDemonstration(guarded.source, train);
  if (longest && longest.steps > config.policy.maxSteps) {
    problems.push({
      key: 'policy.maxSteps',
      message: `${config.policy.maxSteps} planner decisions are fewer than the ${longest.steps} the demonstration of ${longest.taskId} takes (its finish included); set policy.maxSteps to at least ${longest.steps}`,
    });
  }
  const held = config.warmStart.check?.heldOutTasks ?? 0;
  if (guarded.source.demonstration && held > 0 && held >= train.length) {
    problems.push({
      key: 'warmStart.check.heldOutTasks',
      message: `${held} held-back tasks leave none of the ${train.length} training task(s) to demonstrate; hold back fewer, or set warmStart.check to null`,
    });
  }
  return problems;
}

/** Throws INVALID_CONFIG listing every {@link preflightProblems} problem, as `ORIGIN: key: reason`. */
export function assertRunnable(config: RunConfig, guarded: GuardedTaskSource, origin: string): void {
  const problems = preflightProblems(config, guarded);
  if (problems.length === 0) return;
  throw new AgentFlowError({
    code: 'INVALID_CONFIG',
    message: problems.map((problem) => `${origin}: ${problem.key}: ${problem.message}`).join('\n'),
    details: { keys: problems.map((problem) => problem.key) },
  });
}

/** The endpoints a run calls besides its planner, with their config keys: the fixed modules, the step judge. */
export function runEndpoints(config: RunConfig): Array<{ what: string; key: string; endpoint: ChatEndpoint }> {
  return [
    ...(config.fixedModules ? [{ what: 'fixed modules', key: 'fixedModules', endpoint: config.fixedModules }] : []),
    ...(config.label.kind === 'judge' ? [{ what: 'step judge', key: 'label.endpoint', endpoint: config.label.endpoint }] : []),
  ];
}

/** Each of the run's endpoints probed (llm's probeChatEndpoint: its model list, a few seconds at most). */
export async function probeRunEndpoints(
  config: RunConfig,
  settings: { fetch?: typeof fetch; env?: NodeJS.ProcessEnv } = {},
): Promise<Array<{ what: string; key: string; endpoint: ChatEndpoint; probe: ChatEndpointProbe }>> {
  return Promise.all(runEndpoints(config).map(async (entry) => ({ ...entry, probe: await probeChatEndpoint(entry.endpoint, settings) })));
}

/**
 * Refuses a run whose fixed modules or judge do not answer, before any stage: a server that is
 * down or hangs would otherwise fail every agent run of a stage only at its time limit, minutes
 * later. The error names the endpoint, what its probe got and the key to change.
 */
export async function assertEndpointsAnswer(config: RunConfig, settings: { fetch?: typeof fetch; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  const failed = (await probeRunEndpoints(config, settings)).filter(({ probe }) => !probe.ok || probe.missingApiKey);
  if (failed.length === 0) return;
  throw new AgentFlowError({
    code: 'RUNTIME_ERROR',
    message: failed
      .map(
        ({ what, key, endpoint, probe }) =>
          `${what} (${endpoint.kind} ${endpoint.model}): ${probe.ok ? probe.missingApiKey : probe.detail}; start that server or change ${key} (its url and model), or set ${key === 'fixedModules' ? 'fixedModules: null (rule verifier, the planner answers)' : 'label.kind: monte-carlo (no judge)'}.`,
      )
      .join('\n'),
    details: { endpoints: failed.map(({ key }) => key) },
  });
}
