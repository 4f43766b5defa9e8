import { createRandom, type LanguageModel } from '@agentflow/core';
import { accuracy, type TaskWorldTask, trajectoryStats } from '@agentflow/eval';
import type { EvaluationSummary } from '../report/run-summary';
import type { WorldContext } from './world-context';
import { runWorldJobs } from './world-runs';

export interface WorldEvaluation {
  summary: EvaluationSummary;
  /** Per held-out task, in split order: the input of the paired test. */
  correct: boolean[];
}

/**
 * Runs the planner once on every held-out task, at the rollout temperature, with one fixed
 * seed per task: evaluations before and after training sample with the same seeds, so the
 * paired test compares like with like.
 */
export async function evaluateWorldPolicy(
  context: WorldContext,
  model: LanguageModel,
  settings: { progressStage?: string; idPrefix: string; tasks?: readonly TaskWorldTask[] },
): Promise<WorldEvaluation> {
  const tasks = settings.tasks ?? context.world.split('test');
  const { config } = context;
  const seeds = createRandom(config.seed).fork('evaluation');
  const taskSeeds = tasks.map(() => seeds.nextUint32());
  const trajectories = await runWorldJobs(
    context,
    model,
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
  const correct = trajectories.map((trajectory, index) => context.world.checkAnswer(tasks[index]!.id, trajectory.answer));
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
