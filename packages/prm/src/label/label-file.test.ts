import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, createRandom, readJsonl, type Step, type Trajectory } from '@agentflow/core';
import { createOpenAICompatibleModel } from '@agentflow/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackServer, startOpenAiServer } from '../__fixtures__/openai-server';
import type { PrmExample } from '../example/prm-example';
import type { CollectedStepsAdvice } from './collected-steps';
import { type LabelSummary, type LabelTrajectoriesSettings, labelTrajectoriesToFile } from './label-file';
import { nothingLabelledError } from './nothing-labelled-error';
import { createJudgeLabelling, createMonteCarloLabelling, type StepLabelling } from './step-labelling';

// labelTrajectoriesToFile against a judge on loopback and a stand-in Monte-Carlo completer: a
// labeller with nothing usable stops it naming the labeller, the steps and a reply; the labels
// file and the summary are there either way, and a second call labels only what is missing.

const root = mkdtempSync(join(tmpdir(), 'prm-label-file-'));
let garbled: LoopbackServer;
let working: LoopbackServer;

beforeAll(async () => {
  garbled = await startOpenAiServer(() => ({ content: JSON.stringify({ verdict: 'good' }), promptTokens: 10, completionTokens: 5 }));
  working = await startOpenAiServer(() => ({ content: JSON.stringify({ score: 0.75, rationale: 'fine' }), promptTokens: 10, completionTokens: 5 }));
});
afterAll(async () => {
  await garbled?.close();
  await working?.close();
  rmSync(root, { recursive: true, force: true });
});

function step(index: number, parsed: boolean): Step {
  return {
    index,
    prompt: [{ role: 'user', content: 'p' }],
    completion: parsed ? '{}' : '{"thought": "cut off at the tok',
    truncated: !parsed,
    action: parsed ? { thought: `step ${index}`, action: 'python', action_input: { code: `print(${index})` } } : null,
    ...(parsed ? {} : { parseError: 'Unexpected end of JSON input' }),
    timings: { plannerMs: 1, toolMs: 1, verifierMs: 0 },
  };
}

function trajectory(task: number, parsed: boolean[]): Trajectory {
  return {
    id: `collect-task-${task}-0`,
    taskId: `task-${task}`,
    question: `question ${task}`,
    steps: parsed.map((ok, index) => step(index, ok)),
    answer: null,
    termination: 'max_steps',
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
  };
}

const advice: CollectedStepsAdvice = {
  collector: 'the collector',
  trajectoriesPath: 'trajectories.jsonl',
  maxNewTokens: { setting: 'maxNewTokens', value: 48 },
  noSteps: 'the planner and the tasks',
  formatErrors: "the planner's prompt",
  otherwise: 'or train without a PRM',
};

let runs = 0;
/** Settings over a fresh directory; `openLabelling` fails the test unless given. */
function settingsFor(trajectories: Trajectory[], overrides: Partial<LabelTrajectoriesSettings> = {}): LabelTrajectoriesSettings {
  const dir = join(root, `run-${runs++}`);
  return {
    trajectories,
    labeller: 'judge',
    openLabelling: () => {
      throw new Error('the labelling was opened');
    },
    labelsPath: join(dir, 'labels.jsonl'),
    summaryPath: join(dir, 'label-summary.json'),
    advice,
    resumeHint: 'call it again',
    ...overrides,
  };
}

function judgeOn(server: LoopbackServer, cachePath: string): StepLabelling {
  return createJudgeLabelling({
    model: createOpenAICompatibleModel({ model: 'deepseek-chat', endpoints: [server.url], responseFormat: 'json_object', maxRetries: 0 }),
    cachePath,
    description: { model: 'deepseek-chat', url: server.url, setting: 'the judge setting' },
  });
}

async function labellingError(run: () => Promise<unknown>): Promise<AgentFlowError> {
  const error = await run().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!AgentFlowError.isInstance(error)) throw new Error(`expected an AgentFlowError, got ${String(error)}`);
  return error;
}

const summaryOf = (settings: LabelTrajectoriesSettings): LabelSummary => JSON.parse(readFileSync(settings.summaryPath, 'utf8'));

describe('labelTrajectoriesToFile with a judge', () => {
  it('stops when the judge answers nothing usable, naming it, the steps and a reply; a second call with a working judge finishes', async () => {
    // Task 1's second step is a format error: labelled 0 without a call, and no label the PRM learns from.
    const trajectories = [trajectory(1, [true, false]), trajectory(2, [true])];
    const base = settingsFor(trajectories);
    const cachePath = join(root, `cache-${runs}.jsonl`);
    const error = await labellingError(() => labelTrajectoriesToFile({ ...base, openLabelling: () => judgeOn(garbled, cachePath) }));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toContain(`label: the judge deepseek-chat at ${garbled.url} gave no usable reply for any of 2 steps.`);
    expect(error.message).toContain('verdict');
    expect(error.message).toMatch(/Point the judge setting at a judge that answers \{"score": 0\.\.1, "rationale": "\.\.\."\}, then call it again\.$/);
    expect(readJsonl<PrmExample>(base.labelsPath).map((example) => [example.id, example.label])).toEqual([['collect-task-1-0:1', 0]]);
    expect(summaryOf(base)).toMatchObject({ labeller: 'judge', trajectories: 2, steps: 3, formatErrors: 1, labelled: 1, usable: 0, failures: 2, stopped: error.message });

    // The two judged steps are labelled, the format error is not labelled twice.
    const progress: [number, number][] = [];
    const summary = await labelTrajectoriesToFile({
      ...base,
      openLabelling: () => judgeOn(working, cachePath),
      onProgress: ({ completed, total }) => progress.push([completed, total]),
    });
    const labels = readJsonl<PrmExample>(base.labelsPath);
    expect(labels.map((example) => example.id).sort()).toEqual(['collect-task-1-0:0', 'collect-task-1-0:1', 'collect-task-2-0:0']);
    expect(labels.filter((example) => example.action !== null).map((example) => example.label)).toEqual([0.75, 0.75]);
    expect(summary).toMatchObject({ labelled: 3, usable: 2, failures: 0, failureSample: [], meanLabel: 0.5, stats: { calls: 2 } });
    expect(summaryOf(base)).toEqual(summary);
    expect(working.requests).toHaveLength(2);
    expect(progress).toEqual([
      [0, 2],
      [2, 2],
    ]);
  });
});

describe('labelTrajectoriesToFile before any labeller', () => {
  it('stops when every step is a format error, naming the token limit and the advice, without opening the labelling', async () => {
    const settings = settingsFor([trajectory(1, [false, false]), trajectory(2, [false])], { labeller: 'monte-carlo', stage: 'train-prm' });
    const error = await labellingError(() => labelTrajectoriesToFile(settings));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toBe(
      `train-prm: every one of the 3 planner steps in trajectories.jsonl is a format error (its completion did not parse as an action), and the PRM skips format errors: it would have nothing to learn from. 3 of them stopped at maxNewTokens (48 tokens): raise it. The first parse error: "Unexpected end of JSON input". A completion: "{\\"thought\\": \\"cut off at the tok". Check the planner's prompt, or train without a PRM.`,
    );
    expect(error.details).toMatchObject({ reason: 'format-errors', steps: 3, truncated: 3 });
    expect(readFileSync(settings.labelsPath, 'utf8')).toBe('');
    expect(summaryOf(settings)).toMatchObject({ labeller: 'monte-carlo', steps: 3, formatErrors: 3, labelled: 0, stopped: error.message });
  });

  it('says that the collector yielded no steps, with the first trajectory error', async () => {
    const settings = settingsFor([{ ...trajectory(1, []), termination: 'error', error: 'planner: connection refused' }]);
    const error = await labellingError(() => labelTrajectoriesToFile(settings));
    expect(error.message).toBe(
      `label: the collector yielded no planner steps to label (1 trajectories in trajectories.jsonl, ended by error); the PRM would have nothing to learn from. The first trajectory's error: "planner: connection refused". Check the planner and the tasks, or train without a PRM.`,
    );
    expect(existsSync(settings.labelsPath)).toBe(true);
    expect(summaryOf(settings).stopped).toBe(error.message);
  });
});

describe('labelTrajectoriesToFile with Monte-Carlo labelling', () => {
  const description = { setting: 'samples', completer: 'the policy', check: 'the tools' };

  it('appends per batch, keeps what a failed batch left, labels only the rest on the second call, and releases each time', async () => {
    const trajectories = [1, 2, 3, 4, 5].map((task) => trajectory(task, [true, true]));
    const base = settingsFor(trajectories, { labeller: 'monte-carlo', batchSize: 2 });
    const completed: string[] = [];
    let released = 0;
    const open = (crashOn?: string) => () =>
      createMonteCarloLabelling({
        complete: async (prefix, n) => {
          if (prefix.trajectory.id === crashOn) throw new AgentFlowError({ code: 'RUNTIME_ERROR', message: 'the policy crashed' });
          completed.push(prefix.step.id);
          return Array.from({ length: n }, (_, index) => index === 0);
        },
        samples: 2,
        random: createRandom(3),
        description,
        release: async () => {
          released++;
        },
      });
    // The third trajectory's failures are recorded, its batch appended; the labelling goes on.
    const summary = await labelTrajectoriesToFile({ ...base, openLabelling: open('collect-task-3-0') });
    expect(summary).toMatchObject({ trajectories: 5, steps: 10, labelled: 8, usable: 8, failures: 2, meanLabel: 0.5 });
    expect(summary.failureSample).toEqual(['collect-task-3-0:0: the policy crashed', 'collect-task-3-0:1: the policy crashed']);
    expect(released).toBe(1);

    // The second call completes only the missing trajectory's steps.
    completed.length = 0;
    const again = await labelTrajectoriesToFile({ ...base, openLabelling: open() });
    expect(completed.sort()).toEqual(['collect-task-3-0:0', 'collect-task-3-0:1']);
    expect(again).toMatchObject({ labelled: 10, usable: 10, failures: 0 });
    expect(new Set(readJsonl<PrmExample>(base.labelsPath).map((example) => example.id)).size).toBe(10);
    expect(released).toBe(2);
  });

  it('stops naming the samples, the steps and the first failure when no completion ran', async () => {
    const settings = settingsFor([trajectory(1, [true, true])], { labeller: 'monte-carlo' });
    const labelling = createMonteCarloLabelling({
      complete: async () => {
        throw new AgentFlowError({ code: 'RUNTIME_ERROR', message: 'connect ECONNREFUSED 127.0.0.1:11434.' });
      },
      samples: 4,
      random: createRandom(1),
      description,
    });
    const error = await labellingError(() => labelTrajectoriesToFile({ ...settings, openLabelling: () => labelling }));
    expect(error.message).toMatch(/^label: Monte-Carlo labelling \(samples 4 completions per step with the policy\) labelled none of 2 steps\. The first: /);
    expect(error.message).toMatch(/Check the tools, then call it again\.$/);
    expect(summaryOf(settings)).toMatchObject({ labeller: 'monte-carlo', labelled: 0, failures: 2, stopped: error.message });
  });
});

describe('nothingLabelledError', () => {
  it('names the samples, the steps, the first failure and what to check, in the words it is given', () => {
    const failures = [
      { stepId: 't:0', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
      { stepId: 't:1', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
    ];
    const labeller = { kind: 'monte-carlo' as const, samples: 4, setting: 'label.samples', completer: 'the warm-started planner', check: 'the tools' };
    const error = nothingLabelledError('label', labeller, failures, 'resume');
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toBe(
      'label: Monte-Carlo labelling (label.samples 4 completions per step with the warm-started planner) labelled none of 2 steps. The first: fixed modules: connect ECONNREFUSED 127.0.0.1:11434. Check the tools, then resume.',
    );
    expect(error.details).toMatchObject({ reason: 'nothing-labelled', labeller: 'monte-carlo', steps: 2 });
  });

  it('says one step, and names the judge and its url in the details', () => {
    const error = nothingLabelledError('label', { kind: 'judge', model: 'm', url: 'http://j', setting: '--endpoint' }, [{ stepId: 't:0', error: 'no score' }], 'again');
    expect(error.message).toBe('label: the judge m at http://j gave no usable reply for any of 1 step. The first: no score. Point --endpoint at a judge that answers {"score": 0..1, "rationale": "..."}, then again.');
    expect(error.details).toMatchObject({ judge: 'm', url: 'http://j' });
  });
});

describe('labelTrajectoriesToFile settings', () => {
  it('refuses a batch size that is not a positive integer', async () => {
    const error = await labellingError(() => labelTrajectoriesToFile(settingsFor([trajectory(1, [true])], { batchSize: 0 })));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe('batchSize must be a positive integer, got 0.');
  });
});
