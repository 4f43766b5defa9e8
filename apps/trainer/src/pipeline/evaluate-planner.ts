import { createRandom } from '@agentflow/core';
import { accuracy, type TaskItem, trajectoryStats } from '@agentflow/eval';
import type { EvaluationSummary } from '../report/run-summary';
import { type RunAgent, runAgentJobs } from './agent';
import type { PipelineContext } from './pipeline-context';

export interface PlannerEvaluation {
  summary: EvaluationSummary;
  /** Per held-out task, in split order: the input of the paired test. */
  correct: boolean[];
}

/**
 * Runs the agent once on every held-out task (or on `tasks`), at the rollout temperature,
 * with one fixed seed per task: evaluations before and after training sample with the same
 * seeds, so the paired test compares like with like.
 */
export async function evaluatePlanner(
  context: Pick<PipelineContext, 'config' | 'source' | 'emit'>,
  agent: RunAgent,
  settings: { progressStage?: string; idPrefix: string; tasks?: readonly TaskItem[] },
): Promise<PlannerEvaluation> {
  const tasks = settings.tasks ?? context.source.split('test');
  const seeds = createRandom(context.config.seed).fork('evaluation');
  const taskSeeds = tasks.map(() => seeds.nextUint32());
  const trajectories = await runAgentJobs(
    agent,
    tasks.map((task, index) => ({
      question: task.question,
      taskId: task.id,
      trajectoryId: `${settings.idPrefix}-${task.id}`,
      seed: taskSeeds[index] as number,
    })),
    (_batch, done) => {
      if (settings.progressStage) context.emit({ type: 'progress', stage: settings.progressStage, completed: done, total: tasks.length });
    },
  );
  const rewards = await Promise.all(trajectories.map((trajectory, index) => context.source.reward(tasks[index]!, trajectory.answer ?? undefined)));
  const correct = rewards.map((reward) => reward >= 1);
  const estimate = accuracy(correct);
  const stats = trajectoryStats(trajectories);
  return {
    correct,
    summary: {
      accuracy: estimate.estimate,
      ci95: [estimate.lower, estimate.upper],
      correct: estimate.successes,
      total: estimate.total,
      meanSteps: stats.meanSteps,
      meanToolCalls: stats.meanToolCalls,
      formatErrorRate: stats.formatErrorRate,
    },
  };
}
