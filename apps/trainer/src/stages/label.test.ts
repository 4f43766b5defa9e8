import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, openRunDirectory, readJsonl, type RunDirectory, type Step, type Trajectory } from '@agentflow/core';
import { type LabelSummary, nothingLabelledError, type PrmExample } from '@agentflow/prm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runConfigSchema } from '../config/schema';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { type LoopbackChatServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { labelStage, labelSummaryPath, labelsPath, MONTE_CARLO_NAMES } from './label';
import { trainPrmStage } from './train-prm';

// The label stage's wiring of prm's labelTrajectoriesToFile (tested there): the run's files,
// the settings its messages name, the resume through the run's config; and the train-prm stage
// that reads what it left.

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
  it("names the run's judge setting and how to resume when the judge answers nothing usable; the same run finishes with a working judge", async () => {
    const run = runWith([trajectory(1, [true, false]), trajectory(2, [true])]);
    const error = await stageError(() => labelStage.run(contextOf(run, garbled), () => {}));
    expect(error.message).toContain(`label: the judge deepseek-chat at ${garbled.url} gave no usable reply for any of 2 steps.`);
    expect(error.message).toContain('Point label.endpoint (its model, baseUrl or responseFormat) at a judge');
    expect(error.message).toContain(
      `then resume: agentflow run --resume ${run.root} (--set KEY=VALUE changes the run's config, e.g. --set label.endpoint.baseUrl=URL).`,
    );
    expect(summaryOf(run)).toMatchObject({ labeller: 'judge', usable: 0, failures: 2, stopped: error.message });

    // The resume's config names a working judge: the stage's result is the summary in the run directory.
    const events: unknown[] = [];
    const summary = (await labelStage.run(contextOf(run, working), (event) => events.push(event))) as LabelSummary;
    expect(summary).toMatchObject({ labelled: 3, usable: 2, failures: 0 });
    expect(summaryOf(run)).toEqual(summary);
    expect(readJsonl<PrmExample>(labelsPath({ run }))).toHaveLength(3);
    expect(events).toContainEqual({ type: 'progress', stage: 'label', completed: 2, total: 2 });
  });

  it('stops before any labeller when every collected step is a format error, naming policy.maxNewTokens and policy.prompt', async () => {
    const run = runWith([trajectory(1, [false, false]), trajectory(2, [false])]);
    // Monte-Carlo labelling would open the planner: the stage stops before, on the trajectories alone.
    const error = await stageError(() => labelStage.run(contextOf(run), () => {}));
    expect(error.message).toContain(`label: every one of the 3 planner steps in ${run.paths.trajectories}`);
    expect(error.message).toContain('3 of them stopped at policy.maxNewTokens (48 tokens): raise it.');
    expect(error.message).toContain('Check the planner (policy.model) and its prompt (policy.prompt), or use train.credit kind outcome, which needs no labels.');
    expect(summaryOf(run)).toMatchObject({ labeller: 'monte-carlo', stopped: error.message });
  });
});

describe('Monte-Carlo labelling that labels nothing', () => {
  it("names the run's samples setting, the planner, and what to check", () => {
    const failures = [
      { stepId: 't:0', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
      { stepId: 't:1', error: 'fixed modules: connect ECONNREFUSED 127.0.0.1:11434.' },
    ];
    const error = nothingLabelledError('label', { kind: 'monte-carlo', samples: 4, ...MONTE_CARLO_NAMES }, failures, 'resume');
    expect(error.message).toBe(
      'label: Monte-Carlo labelling (label.samples 4 completions per step with the warm-started planner) labelled none of 2 steps. The first: fixed modules: connect ECONNREFUSED 127.0.0.1:11434. Check what the completions call (fixedModules, the tools), or label with a judge (label.kind judge), then resume.',
    );
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
