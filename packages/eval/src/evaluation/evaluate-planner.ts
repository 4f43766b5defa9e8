import { createRandom, type Trajectory } from '@agentflow/core';
import { accuracy } from '../metrics/accuracy';
import { trajectoryStats } from '../metrics/trajectory-stats';
import type { TaskItem, TaskSource } from '../task-source/task-source';

/** One agent run of an evaluation: the question, its ids, its sampling seed and its task's step budget. */
export interface PlannerEvaluationJob {
  question: string;
  taskId: string;
  trajectoryId: string;
  seed: number;
  /** The task's own step budget (`TaskItem.maxSteps`), where it has one: the run's `maxSteps` (flow's `AgentRunSettings`). */
  maxSteps?: number;
}

/** Settings of `evaluatePlanner`. */
export interface PlannerEvaluationSettings {
  /** The tasks, in order (usually a task source's `test` split). */
  tasks: readonly TaskItem[];
  /** Scores each final answer: a reward of at least 1 counts as correct. */
  source: Pick<TaskSource, 'reward'>;
  /**
   * Runs the jobs through the agent (flow's `createAgent(...).run(job.question, job)`) and
   * returns their trajectories in job order; `onBatch` after each batch that finishes, with
   * the number done so far. Batching and concurrency are the caller's.
   */
  runJobs(jobs: readonly PlannerEvaluationJob[], onBatch: (trajectories: Trajectory[], done: number) => void): Promise<Trajectory[]>;
  /** The run's seed: each task's sampling seed derives from it, the same for every evaluation of the run. */
  seed: number;
  /** Trajectory ids are `${idPrefix}-${task.id}`. */
  idPrefix: string;
  /** Called as runs finish. */
  onProgress?: (completed: number, total: number) => void;
}

/** Held-out accuracy of a planner, with its 95% Wilson interval and what its runs looked like. */
export interface PlannerEvaluationSummary {
  accuracy: number;
  ci95: [number, number];
  correct: number;
  total: number;
  meanSteps: number;
  /** Mean planner steps of the runs that answered right: what a solved task costs (null when none did). */
  meanStepsSolved: number | null;
  meanToolCalls: number;
  formatErrorRate: number;
}

export interface PlannerEvaluation {
  summary: PlannerEvaluationSummary;
  /** Per task, in task order: the input of a paired test between two evaluations. */
  correct: boolean[];
}

/**
 * Runs the agent once on every task with one fixed sampling seed per task, drawn from the
 * run's seed, and the task's step budget where it has one: evaluations before and after training sample with the same seeds, so a paired
 * test (`comparePairedRuns`) compares like with like. Scores the answers with the source.
 */
export async function evaluatePlanner(settings: PlannerEvaluationSettings): Promise<PlannerEvaluation> {
  const { tasks, source, idPrefix, onProgress } = settings;
  const seeds = createRandom(settings.seed).fork('evaluation');
  const jobs = tasks.map(
    (task): PlannerEvaluationJob => ({
      question: task.question,
      taskId: task.id,
      trajectoryId: `${idPrefix}-${task.id}`,
      seed: seeds.nextUint32(),
      ...(task.maxSteps === undefined ? {} : { maxSteps: task.maxSteps }),
    }),
  );
  const trajectories = await settings.runJobs(jobs, (_batch, done) => onProgress?.(done, tasks.length));
  const rewards = await Promise.all(trajectories.map((trajectory, index) => source.reward(tasks[index]!, trajectory.answer ?? undefined)));
  const correct = rewards.map((reward) => reward >= 1);
  const estimate = accuracy(correct);
  const stats = trajectoryStats(trajectories);
  const solved = trajectories.filter((_trajectory, index) => correct[index]);
  return {
    correct,
    summary: {
      accuracy: estimate.estimate,
      ci95: [estimate.lower, estimate.upper],
      correct: estimate.successes,
      total: estimate.total,
      meanSteps: stats.meanSteps,
      meanStepsSolved: solved.length === 0 ? null : trajectoryStats(solved).meanSteps,
      meanToolCalls: stats.meanToolCalls,
      formatErrorRate: stats.formatErrorRate,
    },
  };
}
