import type { Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createOutcomeScorer } from './outcome-scorer';
import type { TaskItem } from './task-source';

const item: TaskItem = { id: 't1', question: 'What is 2 + 3?', answer: '5', metadata: {} };
const trajectoryAnswering = (answer: string | null) => ({ id: 'r1', taskId: 't1', question: item.question, answer, steps: [] }) as unknown as Trajectory;
const source = { reward: async (task: TaskItem, answer: string | undefined) => (answer?.trim() === task.answer ? 1 : 0) };

describe('createOutcomeScorer', () => {
  it("scores the trajectory's answer with the source's reward, a missing answer as wrong", async () => {
    const score = createOutcomeScorer(source);
    expect(await score(item, trajectoryAnswering('5'))).toEqual({ reward: 1, correct: true });
    expect(await score(item, trajectoryAnswering('6'))).toEqual({ reward: 0, correct: false });
    expect(await score(item, trajectoryAnswering(null))).toEqual({ reward: 0, correct: false });
  });

  it('tells onScored of every trajectory with its reward', async () => {
    const seen: Array<[string | null, number]> = [];
    const score = createOutcomeScorer(source, { onScored: (trajectory, reward) => seen.push([trajectory.answer, reward]) });
    await score(item, trajectoryAnswering('5'));
    await score(item, trajectoryAnswering('4'));
    expect(seen).toEqual([['5', 1], ['4', 0]]);
  });
});
