import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, readJsonl, type Step, type Trajectory } from '@agentflow/core';
import type { PrmExample } from '@agentflow/prm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runConfigSchema } from '../config/schema';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openRunDirectory, type RunDirectory } from '../pipeline/run-directory';
import { type LoopbackChatServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { type LabelSummary, labelStage, labelSummaryPath, labelsPath } from './label';
import { nothingLabelledError } from './label-outcome';
import { trainPrmStage } from './train-prm';

// The label stage against a judge on loopback: a judge with nothing usable stops it with the
// judge, the steps and a reply named; labels.jsonl and label-summary.json are there either way,
// and the same run labels everything once the config names a working judge.

const KEY_ENV = 'AGENTFLOW_LABEL_TEST_KEY';
const root = mkdtempSync(join(tmpdir(), 'agentflow-label-stage-'));
let garbled: LoopbackChatServer;
let working: LoopbackChatServer;

beforeAll(async () => {
  vi.stubEnv(KEY_ENV, 'test-key');
  garbled = await startOpenAiCompatibleServer('deepseek-chat', 'test-key', () => JSON.stringify({ verdict: 'good' }));
  working = await startOpenAiCompatibleServer('deepseek-chat', 'test-key', () => JSON.stringify({ score: 0.75, rationale: 'fine' }));
});
afterAll(async () => {
  vi.unstubAllEnvs();
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

let runs = 0;
function runWith(trajectories: Trajectory[]): RunDirectory {
  const run = openRunDirectory(join(root, `run-${runs++}`));
  writeFileSync(run.paths.trajectories, trajectories.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return run;
}

/** What the label and train-prm stages read of a context; the judge is `judge`, or Monte-Carlo labelling. */
function contextOf(run: RunDirectory, judge?: LoopbackChatServer): PipelineContext {
  const label = judge
    ? { kind: 'judge', endpoint: { kind: 'openai', baseUrl: judge.url, model: 'deepseek-chat', apiKeyEnv: KEY_ENV, responseFormat: 'json_object' } }
    : { kind: 'monte-carlo' };
  const config = runConfigSchema.parse({ label, policy: { maxNewTokens: 48 } });
  return { config, run, source: { item: () => ({ answer: '7' }) } } as unknown as PipelineContext;
}

async function stageError(run: () => Promise<unknown>): Promise<AgentFlowError> {
  const error = await run().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!AgentFlowError.isInstance(error)) throw new Error(`expected an AgentFlowError, got ${String(error)}`);
  return error;
}

const summaryOf = (run: RunDirectory): LabelSummary => JSON.parse(readFileSync(labelSummaryPath({ run }), 'utf8'));

describe('the label stage', () => {
  it('stops when the judge answers nothing usable, naming it, the steps and a reply; the same run finishes with a working judge', async () => {
    // Task 1's second step is a format error: labelled 0 without a call, and no label the PRM learns from.
    const run = runWith([trajectory(1, [true, false]), trajectory(2, [true])]);
    const error = await stageError(() => labelStage.run(contextOf(run, garbled), () => {}));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toContain(`label: the judge deepseek-chat at ${garbled.url} gave no usable reply for any of 2 steps.`);
    expect(error.message).toContain('verdict');
    expect(error.message).toContain('Point label.endpoint (its model, baseUrl or responseFormat) at a judge');
    expect(error.message).toContain(`agentflow run --resume ${run.root}`);
    expect(readJsonl<PrmExample>(labelsPath({ run })).map((example) => [example.id, example.label])).toEqual([['collect-task-1-0:1', 0]]);
    expect(summaryOf(run)).toMatchObject({ labeller: 'judge', trajectories: 2, steps: 3, formatErrors: 1, labelled: 1, usable: 0, failures: 2, stopped: error.message });

    // The resume's config names a working judge: the two judged steps are labelled, the format error is not labelled twice.
    const summary = (await labelStage.run(contextOf(run, working), () => {})) as LabelSummary;
    const labels = readJsonl<PrmExample>(labelsPath({ run }));
    expect(labels.map((example) => example.id).sort()).toEqual(['collect-task-1-0:0', 'collect-task-1-0:1', 'collect-task-2-0:0']);
    expect(labels.filter((example) => example.action !== null).map((example) => example.label)).toEqual([0.75, 0.75]);
    expect(summary).toMatchObject({ labelled: 3, usable: 2, failures: 0, stats: { calls: 2 } });
    expect(summaryOf(run)).toEqual(summary);
    expect(working.requests).toHaveLength(2);
  });

  it('stops before any labeller when every collected step is a format error, naming policy.maxNewTokens', async () => {
    const run = runWith([trajectory(1, [false, false]), trajectory(2, [false])]);
    // Monte-Carlo labelling would open the planner: the stage stops before, on the trajectories alone.
    const error = await stageError(() => labelStage.run(contextOf(run), () => {}));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toContain('label: every one of the 3 planner steps in');
    expect(error.message).toContain('3 of them stopped at policy.maxNewTokens (48 tokens): raise it.');
    expect(error.message).toContain('The first parse error: "Unexpected end of JSON input"');
    expect(error.message).toContain('policy.prompt');
    expect(readFileSync(labelsPath({ run }), 'utf8')).toBe('');
    expect(summaryOf(run)).toMatchObject({ labeller: 'monte-carlo', steps: 3, formatErrors: 3, labelled: 0, stopped: error.message });
  });

  it('says that collect yielded no steps, with the first trajectory error', async () => {
    const run = runWith([{ ...trajectory(1, []), termination: 'error', error: 'planner: connection refused' }]);
    const error = await stageError(() => labelStage.run(contextOf(run), () => {}));
    expect(error.message).toMatch(/^label: the collect stage yielded no planner steps to label \(1 trajectories in .*, ended by error\)/);
    expect(error.message).toContain(`The first trajectory's error: "planner: connection refused".`);
    expect(existsSync(labelsPath({ run }))).toBe(true);
    expect(summaryOf(run).stopped).toBe(error.message);
  });
});

describe('Monte-Carlo labelling that labels nothing', () => {
  it('names the samples, the steps, the first failure and what to check', () => {
    const failures = [
      { stepId: 't:0', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
      { stepId: 't:1', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
    ];
    const error = nothingLabelledError('label', { kind: 'monte-carlo', samples: 4 }, failures, 'resume');
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toBe(
      'label: Monte-Carlo labelling (label.samples 4 completions per step with the warm-started planner) labelled none of 2 steps. The first: fixed modules: connect ECONNREFUSED 127.0.0.1:11434. Check what the completions call (fixedModules, the tools), or label with a judge (label.kind judge), then resume.',
    );
    expect(error.details).toMatchObject({ reason: 'nothing-labelled', labeller: 'monte-carlo', steps: 2 });
  });
});

describe('the train-prm stage without labels to learn from', () => {
  it('names what collect yielded when every step is a format error, not a missing labels.jsonl', async () => {
    const run = runWith([trajectory(1, [false])]);
    const error = await stageError(() => trainPrmStage.run(contextOf(run), () => {}));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toContain('train-prm: every one of the 1 planner step in');
    expect(error.message).toContain('policy.maxNewTokens');
  });

  it('names the label stage, and why it stopped, when collect yielded steps that parsed', async () => {
    const run = runWith([trajectory(1, [true])]);
    await stageError(() => labelStage.run(contextOf(run, garbled), () => {}));
    rmSync(labelsPath({ run }));
    const error = await stageError(() => trainPrmStage.run(contextOf(run), () => {}));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toMatch(
      /^train-prm: .*labels\.jsonl is missing, though the collect stage yielded steps to label\. The label stage has not finished; it stopped: label: the judge deepseek-chat .* gave no usable reply for any of 1 step\./,
    );
    expect(error.message).toContain('train.credit kind outcome');
    // A label stage recorded done (an earlier version's run) with no usable label: named, with the way to label again.
    run.markStageDone('label');
    writeFileSync(labelsPath({ run }), `${JSON.stringify({ id: 'x:0', action: null, label: 0 })}\n`);
    const done = await stageError(() => trainPrmStage.run(contextOf(run), () => {}));
    expect(done.message).toContain('labels.jsonl holds no step the PRM can learn from (1 labelled, all format errors)');
    expect(done.message).toContain(`The label stage is recorded done: remove "label" from the stages of ${run.paths.state}`);
  });
});
