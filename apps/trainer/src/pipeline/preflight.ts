import { AgentFlowError } from '@agentflow/core';
import { longestDemonstration } from '@agentflow/eval';
import type { NamedChatEndpoint } from '@agentflow/llm';
import type { RunConfig } from '../config/schema';
import type { GuardedTaskSource } from './pipeline-context';

/** A setting the schema accepts but the pipeline cannot run, with the reason and the key. */
export interface PreflightProblem {
  /** Key path of the setting, e.g. `policy.maxSteps`. */
  key: string;
  message: string;
}

/** Why the world's demonstrations are longer than a lookup per fact, a python call and the finish, where its settings make them so. */
function longerDemonstrations(config: RunConfig): string {
  if (config.task.kind !== 'world') return '';
  const reasons = [
    ...(config.task.decoyRate ? ['a check after each stale lookup (task.decoyRate)'] : []),
    ...(config.task.teacher.recoveryRate ? ['a decision more for a recovered mistake (task.teacher.recoveryRate)'] : []),
  ];
  return reasons.map((reason) => `, ${reason}`).join('');
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
      message: `${config.policy.maxSteps} planner decisions are fewer than the ${longest.steps} the demonstration of ${longest.taskId} takes (its finish included${longerDemonstrations(config)}); set policy.maxSteps to at least ${longest.steps}`,
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
export function runEndpoints(config: RunConfig): NamedChatEndpoint[] {
  return [
    ...(config.fixedModules ? [{ what: 'fixed modules', key: 'fixedModules', without: 'fixedModules: null (rule verifier, the planner answers)', endpoint: config.fixedModules }] : []),
    ...(config.label.kind === 'judge' ? [{ what: 'step judge', key: 'label.endpoint', without: 'label.kind: monte-carlo (no judge)', endpoint: config.label.endpoint }] : []),
  ];
}
