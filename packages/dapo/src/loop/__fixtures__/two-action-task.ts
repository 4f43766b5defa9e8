import type { PlannerAction, Random, Step, Trajectory } from '@agentflow/core';
import { type TabularPolicy, type TabularPolicySettings, createTabularPolicy } from '../../testing';

/** The text of action `token`: 0 = "A", 1 = "B". */
export const actionLetter = (token: number): string => String.fromCharCode(65 + token);

/** The testing export's tabular policy, its actions written as letters. */
export const createTwoActionPolicy = (settings: TabularPolicySettings): TabularPolicy => createTabularPolicy({ tokenText: actionLetter, ...settings });

/** Prompt p must be answered with action `correct[p]` (0 = "A", 1 = "B"). */
export interface TwoActionPrompt {
  id: number;
  correct: number;
}

export const twoActionPrompts = (count: number): TwoActionPrompt[] =>
  Array.from({ length: count }, (_value, id) => ({ id, correct: (id * 7 + 3) % 5 < 2 ? 0 : 1 }));

const step = (index: number, promptTokenIds: number[], token: number, logprob: number, action: PlannerAction): Step => ({
  index,
  prompt: [{ role: 'user', content: `task ${promptTokenIds[0]}` }],
  completion: actionLetter(token),
  promptTokenIds,
  completionTokenIds: [token],
  completionLogprobs: [logprob],
  truncated: false,
  action,
  timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
});

/**
 * Rolls out `count` one-step trajectories by sampling the policy with seeds from `random`;
 * with `finishPromptId`, a second step follows: token 0 ("finish") in a context of its own.
 */
export function createTwoActionRollouts(policy: TabularPolicy, settings: { finishPromptId?: number } = {}) {
  return async (prompt: TwoActionPrompt, count: number, random: Random): Promise<Trajectory[]> => {
    const generations = await policy.generate(
      Array.from({ length: count }, () => ({ promptIds: [prompt.id], maxTokens: 1, temperature: 1, seed: random.nextUint32() })),
    );
    return generations.map((generation, rollout) => {
      const token = generation.tokenIds[0] as number;
      const pick: PlannerAction = { thought: '', action: generation.text, action_input: '' };
      const steps = [step(0, [prompt.id], token, generation.logprobs[0] as number, pick)];
      const finish = settings.finishPromptId;
      if (finish !== undefined) {
        steps.push(step(1, [finish], 0, Math.log(policy.probability(finish, 0)), { thought: '', action: 'finish', action_input: '' }));
      }
      return {
        id: `${prompt.id}-${rollout}`,
        question: `task ${prompt.id}`,
        steps,
        answer: generation.text,
        termination: 'finished',
        startedAt: '2026-01-01T00:00:00.000Z',
        durationMs: 0,
      } satisfies Trajectory;
    });
  };
}

export const scoreTwoAction = (prompt: TwoActionPrompt, trajectory: Trajectory) => {
  const correct = trajectory.steps[0]?.completionTokenIds?.[0] === prompt.correct;
  return { reward: correct ? 1 : 0, correct };
};

/** Expected success rate over all prompts: the mean of pi(correct | prompt). */
export const successRate = (policy: TabularPolicy, prompts: readonly TwoActionPrompt[]) =>
  prompts.reduce((sum, prompt) => sum + policy.probability(prompt.id, prompt.correct), 0) / prompts.length;
