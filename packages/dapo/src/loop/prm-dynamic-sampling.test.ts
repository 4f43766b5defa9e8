import { type PolicyTrainingBatch, type Step, type Trajectory, createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import type { DapoConfigInput } from '../config/dapo-config';
import { createTabularPolicy } from '../testing';
import { createDapoTrainer } from './dapo-trainer';
import type { DapoStepMetrics } from './step-metrics';

/** Each prompt finishes in a context of its own: prompt 0 in 2, prompt 1 in 3. */
const finishContext = (id: number) => id + 2;
const step = (index: number, context: number, token: number): Step => ({
  index,
  prompt: [],
  completion: String(token),
  promptTokenIds: [context],
  completionTokenIds: [token],
  truncated: false,
  action: { thought: '', action: index === 0 ? `pick-${token}` : 'finish', action_input: '' },
  timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
});

/**
 * A scripted group of 4 two-step rollouts of prompt `id`: a pick (token 1 or 0), then finish.
 * Prompt 0: every rollout answers right, but rollouts 2 and 3 pick 0, a step the PRM scores
 * 0.3 (wasted), against 0.9 for pick 1; finish scores 0.8. Outcomes all equal, scores differ.
 * Prompt 1: pick 1 answers right, pick 0 wrong; the PRM scores as for prompt 0.
 */
function scriptedGroup(id: number): Trajectory[] {
  return [1, 1, 0, 0].map((token, rollout) => ({
    id: `${id}-${rollout}`,
    question: `task ${id}`,
    steps: [step(0, id, token), step(1, finishContext(id), 0)],
    stepRewards: [token === 1 ? 0.9 : 0.3, 0.8],
    answer: id === 0 || token === 1 ? 'right' : 'wrong',
    termination: 'finished',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 0,
  }));
}

async function oneStep(config: DapoConfigInput) {
  const policy = createTabularPolicy({ prompts: 4 });
  const batches: PolicyTrainingBatch[] = [];
  const metrics: DapoStepMetrics[] = [];
  const trainer = createDapoTrainer<{ id: number }>({
    config: { groupSize: 4, promptsPerBatch: 2, promptsPerMiniBatch: 2, totalSteps: 1, checkpointEvery: 0, evaluateEvery: 0, overlong: { enabled: false }, ...config },
    policy: {
      ...policy,
      accumulateGradients: (batch) => {
        batches.push(batch);
        return policy.accumulateGradients(batch);
      },
    },
    prompts: [{ id: 0 }, { id: 1 }],
    sampleRollouts: async (prompt) => scriptedGroup(prompt.id),
    scoreOutcome: (_prompt, trajectory) => ({ reward: trajectory.answer === 'right' ? 1 : 0, correct: trajectory.answer === 'right' }),
    random: createRandom(0),
    onMetrics: (step) => void metrics.push(step),
  });
  await trainer.run();
  // The advantage of every trained row of prompt 0's group (its picks and its finishes), in order.
  const group0 = batches.flatMap((batch) =>
    batch.promptIds.flatMap((prompt, row) => (prompt[0] === 0 || prompt[0] === finishContext(0) ? [{ context: prompt[0], advantage: batch.advantages?.[row]?.[0] as number }] : [])),
  );
  return { metrics: metrics[0] as DapoStepMetrics, group0 };
}

/*
 * Process-sum on prompt 0's group, eps 0: the 8 scores [0.9, 0.8] x 2 and [0.3, 0.8] x 2 have
 * mean 0.7, deviations +0.2 / +0.1 / -0.4, squares sum 0.44, Bessel std sqrt(0.44 / 7) =
 * 0.25071327; normalised 0.79772404 / 0.39886202 / -1.59544807. Summed from each step on:
 * pick 1 -> 0.79772404 + 0.39886202 = 1.19658606, pick 0 -> -1.19658606, finish -> 0.39886202.
 * The outcome part of `mix` is 0 (all rewards 1), so mix with lambda 1 gives the same numbers.
 */
const pick1 = 1.19658606;
const finish = 0.39886202;

describe('dynamic sampling on the PRM signal, in the loop', () => {
  for (const credit of [{ kind: 'process-sum' }, { kind: 'mix', lambda: 1 }] as const) {
    it(`${credit.kind}: keeps an all-right group whose step scores differ, trains it on non-zero advantages, and counts it`, async () => {
      const { metrics, group0 } = await oneStep({ credit, dynamicSampling: { kind: 'drop' }, advantage: { eps: 0 } });
      expect(metrics).toMatchObject({ groupsKept: 2, groupsDropped: 0, equalOutcomeGroups: 1 });
      // Picks 1, 1, 0, 0, then the four finishes.
      const picks = group0.filter((row) => row.context === 0).map((row) => row.advantage);
      expect(picks).toHaveLength(4);
      [pick1, pick1, -pick1, -pick1].forEach((value, index) => {
        expect(picks[index]).toBeCloseTo(value, 7);
      });
      const finishes = group0.filter((row) => row.context === finishContext(0)).map((row) => row.advantage);
      expect(finishes).toHaveLength(4);
      for (const value of finishes) expect(value).toBeCloseTo(finish, 7);
    });
  }

  it("signal 'prm' keeps it too; 'outcome' drops it, as a config without signal does with outcome credit", async () => {
    const prm = await oneStep({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'drop', signal: 'prm' } });
    expect(prm.metrics).toMatchObject({ groupsKept: 2, equalOutcomeGroups: 1 });
    const outcome = await oneStep({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'drop', signal: 'outcome' } });
    expect(outcome.metrics).toMatchObject({ groupsKept: 1, groupsDropped: 1, rolloutsDropped: 4, equalOutcomeGroups: 0 });
    expect(outcome.group0.filter((row) => row.context === 0)).toEqual([]);
    const today = await oneStep({ credit: { kind: 'outcome' }, dynamicSampling: { kind: 'drop' } });
    expect(today.metrics).toMatchObject({ groupsKept: 1, groupsDropped: 1, equalOutcomeGroups: 0 });
    expect(today.group0.filter((row) => row.context === 0)).toEqual([]);
  });

  it("reports the PRM's fit to the step's own outcomes (its freshness), and none without step scores", async () => {
    // Every finish scores 0.8; 6 of the 8 rollouts are right: (6 x 0.2^2 + 2 x 0.8^2) / 8 = 0.19,
    // against the constant 0.75 x 0.25 = 0.1875.
    const { metrics } = await oneStep({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'drop' } });
    expect(metrics.prmOutcomeMse).toBeCloseTo(0.19, 10);
    expect(metrics.prmOutcomeMseConstant).toBeCloseTo(0.1875, 10);
    const outcome = await oneStep({ credit: { kind: 'outcome' }, dynamicSampling: { kind: 'drop' } });
    expect(outcome.metrics).toMatchObject({ prmOutcomeMse: null, prmOutcomeMseConstant: null });
  });
});
