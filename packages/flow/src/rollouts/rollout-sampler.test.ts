import { createRandom, type Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createRolloutSampler } from './rollout-sampler';

describe('createRolloutSampler', () => {
  it('runs count rollouts of a prompt, with ids of their own and seeds drawn in order', async () => {
    const calls: Array<{ question: string; taskId: string; trajectoryId: string; seed: number }> = [];
    const sample = createRolloutSampler({
      idPrefix: 'train',
      run: async (question, ids) => {
        calls.push({ question, ...ids });
        return { id: ids.trajectoryId, taskId: ids.taskId, question, steps: [], answer: null, termination: 'finished' } as unknown as Trajectory;
      },
    });
    const first = await sample({ id: 'q1', question: 'What is 2+2?' }, 3, createRandom(5));
    await sample({ id: 'q2', question: 'What is 3+3?' }, 2, createRandom(5));
    expect(first.map((trajectory) => trajectory.id)).toEqual(['train-q1-0', 'train-q1-1', 'train-q1-2']);
    expect(calls.map((call) => call.trajectoryId).slice(3)).toEqual(['train-q2-3', 'train-q2-4']);
    const seeds = createRandom(5);
    expect(calls.slice(0, 3).map((call) => call.seed)).toEqual([seeds.nextUint32(), seeds.nextUint32(), seeds.nextUint32()]);
    expect(calls.every((call) => call.question === (call.taskId === 'q1' ? 'What is 2+2?' : 'What is 3+3?'))).toBe(true);
  });

  it("passes a prompt's step budget to every rollout, and none for a prompt without one", async () => {
    const budgets: Array<number | undefined> = [];
    const sample = createRolloutSampler({
      run: async (question, ids) => {
        budgets.push(ids.maxSteps);
        return { id: ids.trajectoryId, taskId: ids.taskId, question, steps: [], answer: null, termination: 'max_steps' } as unknown as Trajectory;
      },
    });
    await sample({ id: 'q1', question: 'What is 2+2?', maxSteps: 4 }, 2, createRandom(1));
    await sample({ id: 'q2', question: 'What is 3+3?' }, 1, createRandom(1));
    expect(budgets).toEqual([4, 4, undefined]);
  });
});
