import type { Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { runAgentJobs } from './run-agent-jobs';

const job = (index: number) => ({ question: `q${index}`, taskId: `t${index}`, trajectoryId: `r${index}`, seed: index });

describe('runAgentJobs', () => {
  it('runs the jobs in batches of `concurrency` at once, in job order, and reports each batch', async () => {
    let running = 0;
    let most = 0;
    const agent = {
      run: async (question: string, settings?: { trajectoryId?: string }) => {
        running++;
        most = Math.max(most, running);
        // Later jobs finish first: the result is in job order all the same.
        await new Promise((resolve) => setTimeout(resolve, 20 - Number(question.slice(1))));
        running--;
        return { id: settings?.trajectoryId, question } as unknown as Trajectory;
      },
    };
    const batches: Array<[string[], number]> = [];
    const trajectories = await runAgentJobs(agent, [0, 1, 2, 3, 4].map(job), {
      concurrency: 2,
      onBatch: (batch, done) => void batches.push([batch.map((trajectory) => trajectory.id), done]),
    });
    expect(trajectories.map((trajectory) => trajectory.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(most).toBe(2);
    expect(batches).toEqual([
      [['r0', 'r1'], 2],
      [['r2', 'r3'], 4],
      [['r4'], 5],
    ]);
  });

  it('refuses a concurrency that is not a positive integer', async () => {
    await expect(runAgentJobs({ run: async () => ({}) as Trajectory }, [job(0)], { concurrency: 0 })).rejects.toThrow(/concurrency must be a positive integer, got 0/);
  });
});
