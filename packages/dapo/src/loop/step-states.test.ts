import { type PlannerAction, type Step, type Trajectory, createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { parseDapoConfig } from '../config/dapo-config';
import { createTwoActionPolicy, createTwoActionRollouts, scoreTwoAction, successRate, twoActionPrompts } from './__fixtures__/two-action-task';
import { createDapoTrainer } from './dapo-trainer';
import type { ScoredGroup } from './scored-group';
import { stepStateKeys } from './step-states';
import { buildTrainingRows } from './training-rows';

let nextToken = 0;
const step = (index: number, action: PlannerAction | null, result?: { output: string; error?: string }): Step => ({
  index,
  prompt: [],
  completion: '',
  promptTokenIds: [index],
  completionTokenIds: [nextToken++],
  truncated: false,
  action,
  ...(action === null ? { parseError: 'not JSON' } : {}),
  ...(result ? { toolResult: { ...result, truncated: false, durationMs: 1 } } : {}),
  timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
});
const call = (thought: string, action: string, input: PlannerAction['action_input']): PlannerAction => ({ thought, action, action_input: input });
const trajectory = (id: string, steps: Step[]): Trajectory => ({
  id,
  question: 'Who founded Acme?',
  steps,
  answer: null,
  termination: 'finished',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 0,
});

// The worked example of math/gigpo.test.ts as an agent's rollouts: o1 and o2 make the same
// first lookup (in different words, keys in another order) and get the decoy; o1 checks again.
const o1 = trajectory('o1', [
  step(0, call('look it up', 'lookup', { name: 'Acme', year: 1990 }), { output: 'Acme Ltd: founded by B. Decoy' }),
  step(1, call('that is the wrong Acme', 'lookup', { name: 'Acme Inc' }), { output: 'Acme Inc: founded by A. Right' }),
  step(2, call('done', 'finish', 'A. Right')),
]);
const o2 = trajectory('o2', [
  step(0, call('search the name', 'lookup', { year: 1990, name: 'Acme' }), { output: 'Acme Ltd: founded by B. Decoy' }),
  step(1, call('answer', 'finish', 'B. Decoy')),
]);
const o3 = trajectory('o3', [
  step(0, call('be precise', 'lookup', { name: 'Acme Inc' }), { output: 'Acme Inc: founded by A. Right' }),
  step(1, call('done', 'finish', 'A. Right')),
]);
const o4 = trajectory('o4', [
  step(0, call('compute', 'python', { code: 'print(acme)' }), { output: '', error: "NameError: name 'acme' is not defined" }),
  step(1, call('guess', 'finish', 'C. Guess')),
]);

describe('stepStateKeys (GiGPO anchor states)', () => {
  it('gives steps after the same calls and results one state, whatever the thoughts or the key order', () => {
    const [k1, k2, k3, k4] = [o1, o2, o3, o4].map(stepStateKeys);
    expect(new Set([k1?.[0], k2?.[0], k3?.[0], k4?.[0]]).size).toBe(1);
    expect(k1?.[1]).toBe(k2?.[1]);
    expect(new Set([k1?.[1], k1?.[2], k3?.[1], k4?.[1]]).size).toBe(4);
  });

  it('tells apart the same call with another result, and a format error from no step', () => {
    const stale = trajectory('stale', [step(0, call('look it up', 'lookup', { name: 'Acme', year: 1990 }), { output: 'Acme Ltd: (stale entry)' }), step(1, null)]);
    expect(stepStateKeys(stale)[1]).not.toBe(stepStateKeys(o1)[1]);
    const afterFormatError = trajectory('fe', [step(0, null), step(1, null)]);
    expect(stepStateKeys(afterFormatError)[1]).not.toBe(stepStateKeys(afterFormatError)[0]);
  });
});

describe("credit 'gigpo'", () => {
  it('gives every step its episode advantage plus its step-group advantage (numbers of math/gigpo.test.ts)', () => {
    const group: ScoredGroup = { promptIndex: 0, trajectories: [o1, o2, o3, o4], rewards: [1, 0, 1, 0], correct: [true, false, true, false] };
    const config = parseDapoConfig({ credit: { kind: 'gigpo', gamma: 0.5 }, advantage: { eps: 0 } });
    const rows = buildTrainingRows([group], config);
    const e = 0.8660254;
    const expected = [
      [e + 0.26111648, e + Math.SQRT1_2, e], // o1: the re-check after the decoy is credited
      [-e - 0.78334945, -e - Math.SQRT1_2], // o2: answering on the decoy is blamed
      [e + 1.30558242, e], // o3: its finish shares no state: episode advantage only
      [-e - 0.78334945, -e],
    ].flat();
    expect(rows).toHaveLength(expected.length);
    rows.forEach((row, index) => {
      expect(row.advantages[0]).toBeCloseTo(expected[index] as number, 7);
    });
  });

  it('trains the two-action task from chance to > 95% without a PRM', async () => {
    const prompts = twoActionPrompts(8);
    const policy = createTwoActionPolicy({ prompts: prompts.length + 1 });
    const trainer = createDapoTrainer({
      config: {
        groupSize: 8,
        promptsPerBatch: 4,
        promptsPerMiniBatch: 2,
        learningRate: 0.1,
        warmupSteps: 2,
        totalSteps: 25,
        checkpointEvery: 0,
        evaluateEvery: 0,
        credit: { kind: 'gigpo' },
        dynamicSampling: { kind: 'refill', maxRounds: 30 },
        overlong: { enabled: false },
      },
      policy,
      prompts,
      // Two steps: the pick, then finish in a context of its own; no stepScorer is given.
      sampleRollouts: createTwoActionRollouts(policy, { finishPromptId: prompts.length }),
      scoreOutcome: scoreTwoAction,
      random: createRandom(3),
    });
    expect(successRate(policy, prompts)).toBe(0.5);
    await trainer.run();
    expect(successRate(policy, prompts)).toBeGreaterThan(0.95);
  });
});
