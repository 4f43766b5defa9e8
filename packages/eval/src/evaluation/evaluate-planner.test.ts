import type { Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { wilsonInterval } from '../metrics/accuracy';
import type { TaskItem } from '../task-source/task-source';
import { evaluatePlanner, type PlannerEvaluationJob, type PlannerEvaluationSettings } from './evaluate-planner';

const tasks: TaskItem[] = Array.from({ length: 5 }, (_, index) => ({ id: `t${index}`, question: `q${index}`, answer: String(index), metadata: {} }));

/** An agent that answers right on even seeds, in batches of two; records what it was asked. */
function fakeAgent() {
  const asked: PlannerEvaluationJob[] = [];
  const runJobs: PlannerEvaluationSettings['runJobs'] = async (jobs, onBatch) => {
    const trajectories: Trajectory[] = [];
    for (let start = 0; start < jobs.length; start += 2) {
      const batch = jobs.slice(start, start + 2).map(
        (job): Trajectory => ({
          id: job.trajectoryId,
          question: job.question,
          steps: [],
          answer: job.seed % 2 === 0 ? job.question.slice(1) : 'wrong',
          termination: 'finished',
          startedAt: '2026-01-01T00:00:00Z',
          durationMs: 1,
        }),
      );
      asked.push(...jobs.slice(start, start + 2));
      trajectories.push(...batch);
      onBatch(batch, trajectories.length);
    }
    return trajectories;
  };
  return { asked, runJobs };
}

const source = { reward: async (task: TaskItem, answer: string | undefined) => (answer === task.answer ? 1 : 0) };

describe('evaluatePlanner', () => {
  it('runs each task once with a seed from the run, scores it with the source, and reports accuracy with its Wilson interval', async () => {
    const agent = fakeAgent();
    const progress: Array<[number, number]> = [];
    const evaluation = await evaluatePlanner({
      tasks,
      source,
      runJobs: agent.runJobs,
      seed: 3,
      idPrefix: 'eval-before',
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(agent.asked.map((job) => [job.taskId, job.trajectoryId, job.question])).toEqual(tasks.map((task) => [task.id, `eval-before-${task.id}`, task.question]));
    expect(new Set(agent.asked.map((job) => job.seed)).size).toBe(tasks.length);
    expect(evaluation.correct).toEqual(agent.asked.map((job) => job.seed % 2 === 0));
    const right = evaluation.correct.filter(Boolean).length;
    const wilson = wilsonInterval(right, tasks.length);
    expect(evaluation.summary).toEqual({
      accuracy: right / tasks.length,
      ci95: [wilson.lower, wilson.upper],
      correct: right,
      total: tasks.length,
      meanSteps: 0,
      meanStepsSolved: right === 0 ? null : 0,
      meanToolCalls: 0,
      formatErrorRate: 0,
    });
    expect(progress).toEqual([
      [2, 5],
      [4, 5],
      [5, 5],
    ]);
  });

  it('samples every evaluation of a run with the same seeds, so before and after compare like with like', async () => {
    const before = fakeAgent();
    const after = fakeAgent();
    const other = fakeAgent();
    await evaluatePlanner({ tasks, source, runJobs: before.runJobs, seed: 3, idPrefix: 'eval-before' });
    await evaluatePlanner({ tasks, source, runJobs: after.runJobs, seed: 3, idPrefix: 'eval-after' });
    await evaluatePlanner({ tasks, source, runJobs: other.runJobs, seed: 4, idPrefix: 'eval-before' });
    expect(after.asked.map((job) => job.seed)).toEqual(before.asked.map((job) => job.seed));
    expect(other.asked.map((job) => job.seed)).not.toEqual(before.asked.map((job) => job.seed));
  });

  it("asks for each task's step budget where it has one, and for none where it has not", async () => {
    const agent = fakeAgent();
    const budgeted = tasks.map((task, index) => (index % 2 === 0 ? { ...task, maxSteps: 3 + index } : task));
    await evaluatePlanner({ tasks: budgeted, source, runJobs: agent.runJobs, seed: 3, idPrefix: 'eval' });
    expect(agent.asked.map((job) => job.maxSteps)).toEqual([3, undefined, 5, undefined, 7]);
    expect(agent.asked.filter((job) => 'maxSteps' in job).map((job) => job.taskId)).toEqual(['t0', 't2', 't4']);
  });
});
