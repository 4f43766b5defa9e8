/**
 * `agentflow eval` in its benchmark mode, through the built CLI: a slice of the real
 * aime24.json, an Ollama-format loopback planner scripted per question (right, wrong, python
 * then right, python then the fixed verifier stops, format errors until the generator
 * answers), and an OpenAI-format loopback verifier and generator. Needs the benchmark files
 * of `../shared/datasets` (or AGENTFLOW_DATASETS) and the python sandbox; says so and skips
 * without them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { type BenchmarkItem, type EvalRecord, type EvalSummary, loadAgentFlowJson, wilsonInterval } from '@agentflow/eval';
import { createPythonTool } from '@agentflow/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatRequestBody, type LoopbackChatServer, startHeldOllamaServer, startOllamaServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';

const root = resolve(__dirname, '..', '..', '..', '..', '..');
const cli = join(root, 'apps', 'trainer', 'dist', 'cli.js');
const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(root, '..', 'shared', 'datasets');
const aime24 = join(datasets, 'aime24.json');
const pythonUnavailable = await createPythonTool()
  .unavailableReason()
  .catch((error: unknown) => String(error));
const skipReason = !existsSync(aime24)
  ? `no ${aime24} (set AGENTFLOW_DATASETS to run this suite)`
  : pythonUnavailable
    ? `the python tool is unavailable here (${pythonUnavailable})`
    : undefined;
if (skipReason) console.log(`eval-command: benchmark tests SKIPPED, ${skipReason}.`);

const API_KEY = 'loopback-key';
const KEY_ENV = 'AGENTFLOW_EVAL_TEST_KEY';

interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process: the loopback servers answer it from here. */
function agentflow(args: string[], killWhen?: () => boolean): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('node', [cli, ...args], { env: { ...process.env, [KEY_ENV]: API_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = killWhen
      ? setInterval(() => {
          if (killWhen()) child.kill('SIGKILL');
        }, 20)
      : undefined;
    child.on('error', reject);
    child.on('exit', (status) => {
      if (timer) clearInterval(timer);
      resolvePromise({ status, stdout, stderr });
    });
  });
}

/** What the planner does on each item of the slice, in file order. */
const SCRIPT = ['right', 'wrong', 'python-then-right', 'python-then-verifier-stops', 'wrong', 'format-errors'] as const;
type Behaviour = (typeof SCRIPT)[number];
/** Right: finished right, or the generator wrote the right answer (the verifier stopped; max steps). */
const CORRECT = SCRIPT.filter((behaviour) => behaviour !== 'wrong').length;

const textOf = (body: ChatRequestBody) => body.messages.map((message) => message.content).join('\n');
const action = (name: string, input: unknown) => JSON.stringify({ thought: 'scripted', action: name, action_input: input });

describe.skipIf(skipReason !== undefined)('agentflow eval --planner ... --data aime24.json (loopback planner and fixed modules)', () => {
  let work: string;
  let items: BenchmarkItem[];
  let planner: LoopbackChatServer;
  let heldPlanner: LoopbackChatServer;
  let fixed: LoopbackChatServer;
  /** Set by the kill test: the planner request of this item waits until the process is killed. */
  let holdItem: string | undefined;

  const itemOf = (body: ChatRequestBody): { item: BenchmarkItem; behaviour: Behaviour } => {
    const text = textOf(body);
    const index = items.findIndex((item) => text.includes(item.question));
    if (index < 0) throw new Error(`no scripted item in ${text.slice(0, 200)}`);
    return { item: items[index]!, behaviour: SCRIPT[index]! };
  };
  const plannerReply = (body: ChatRequestBody): string => {
    const { item, behaviour } = itemOf(body);
    const step = Number(/This is step (\d+)/.exec(textOf(body))?.[1] ?? '1');
    switch (behaviour) {
      case 'right':
        return action('finish', item.answer);
      case 'wrong':
        return action('finish', String(Number(item.answer) + 1));
      case 'python-then-right':
        return step === 1 ? action('python', { code: `print(${item.answer})` }) : action('finish', item.answer);
      case 'python-then-verifier-stops':
        return action('python', { code: `print(${item.answer})` });
      case 'format-errors':
        return 'I am not sure yet.';
    }
  };
  const questionsOf = (requests: readonly ChatRequestBody[]) => requests.map(textOf);
  const commonArgs = (out: string, plannerUrl: string) => [
    'eval',
    ...['--planner', 'ollama:qwen3:8b', '--ollama-url', plannerUrl],
    ...['--fixed-modules', 'openai:deepseek-chat', '--openai-base-url', fixed.url, '--api-key-env', KEY_ENV],
    ...['--data', aime24, '--limit', String(SCRIPT.length), '--max-steps', '3', '--out', out],
  ];

  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm --filter @agentflow/trainer build\` first.`);
    work = mkdtempSync(join(tmpdir(), 'agentflow-eval-'));
    items = loadAgentFlowJson(aime24).slice(0, SCRIPT.length);
    planner = await startOllamaServer('qwen3:8b', plannerReply);
    heldPlanner = await startHeldOllamaServer('qwen3:8b', (body) =>
      holdItem !== undefined && itemOf(body).item.id === holdItem ? new Promise<string>(() => {}) : Promise.resolve(plannerReply(body)),
    );
    // The fixed verifier stops after the python step of one item; the generator answers right.
    fixed = await startOpenAiCompatibleServer('deepseek-chat', API_KEY, (body) => {
      const { item, behaviour } = itemOf(body);
      if (body.messages[0]?.content.includes('You check the work')) {
        return JSON.stringify({ analysis: 'scripted verdict', stop: behaviour === 'python-then-verifier-stops' });
      }
      return `\\boxed{${item.answer}}`;
    });
  });

  afterAll(async () => {
    await Promise.all([planner?.close(), heldPlanner?.close(), fixed?.close()]);
  });

  it('writes eval.jsonl, trajectories.jsonl and eval.json with the accuracy, pass@k and avg@k the script answered', async () => {
    const out = join(work, 'two-samples');
    const result = await agentflow([...commonArgs(out, planner.url), '--samples', '2']);
    expect(result.stderr).toContain(`Starting eval of ollama:qwen3:8b on ${aime24}`);
    expect(result.stderr).toMatch(/eval .*12\/12/);
    expect(result.status).toBe(0);
    const runs = SCRIPT.length * 2;
    const summary = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as EvalSummary;
    const interval = wilsonInterval(CORRECT * 2, runs);
    expect(summary).toMatchObject({ complete: true, items: SCRIPT.length, total: runs, correct: CORRECT * 2, accuracy: (CORRECT * 2) / runs });
    expect(summary.ci95[0]).toBeCloseTo(interval.lower, 12);
    expect(summary.ci95[1]).toBeCloseTo(interval.upper, 12);
    // The script is the same for both samples: pass@2 and avg@2 are the share of items it answers right.
    expect(summary.passAtK).toEqual({ k: 2, value: CORRECT / SCRIPT.length });
    expect(summary.avgAtK).toEqual({ k: 2, value: CORRECT / SCRIPT.length });
    // Steps per item: 1, 1, 2, 1, 1, 3 (three format errors, then max_steps); tool calls: the two python steps.
    expect(summary.meanSteps).toBeCloseTo(9 / 6, 12);
    expect(summary.meanToolCalls).toBeCloseTo(2 / 6, 12);
    expect(summary.formatErrorRate).toBeCloseTo(3 / 9, 12);
    expect(summary.settings).toMatchObject({ planner: 'ollama:qwen3:8b', samples: 2, temperature: 0.8, seed: 0, data: { path: aime24, format: 'agentflow-json', limit: 6 } });
    expect(result.stdout).toContain(`accuracy ${summary.accuracy.toFixed(3)} (8/12`);

    const records = readJsonl<EvalRecord>(join(out, 'eval.jsonl'));
    expect(records).toHaveLength(runs);
    const byItem = new Map(items.map((item, index) => [item.id, SCRIPT[index]!]));
    for (const record of records) expect(record.correct).toBe(byItem.get(record.itemId) !== 'wrong');
    expect(new Set(records.map((record) => record.seed)).size).toBe(runs);
    const trajectories = readJsonl<Trajectory>(join(out, 'trajectories.jsonl'));
    expect(trajectories.map((trajectory) => trajectory.id).sort()).toEqual(records.map((record) => record.trajectoryId).sort());
    const stopped = trajectories.find((trajectory) => byItem.get(trajectory.taskId ?? '') === 'python-then-verifier-stops');
    expect(stopped?.steps[0]?.toolResult?.output.trim()).toBe(stopped && items.find((item) => item.id === stopped.taskId)?.answer);

    // HTTP planners get the flat action schema; the fixed modules answered both kinds of request.
    const format = planner.requests[0]?.format as { properties: { action: { enum: string[] } } };
    expect(format.properties.action.enum).toEqual(['python', 'finish']);
    const fixedSystems = fixed.requests.map((request) => request.messages[0]?.content ?? '');
    expect(fixedSystems.some((system) => system.includes('You check the work'))).toBe(true);
    expect(fixedSystems.some((system) => system.includes('Write the final answer'))).toBe(true);
  }, 120_000);

  it('killed with SIGKILL mid-way, resumes without a request for a finished item; refuses other settings', async () => {
    const out = join(work, 'killed');
    const recordsPath = join(out, 'eval.jsonl');
    const recordCount = () => (existsSync(recordsPath) ? readJsonl(recordsPath).length : 0);
    // One run at a time; the fourth item's planner request never returns until the kill.
    holdItem = items[3]!.id;
    const args = [...commonArgs(out, heldPlanner.url), '--concurrency', '1', '--quiet'];
    const killed = await agentflow(args, () => recordCount() >= 3 && questionsOf(heldPlanner.requests).some((text) => text.includes(items[3]!.question)));
    expect(killed.status).toBeNull();
    holdItem = undefined;
    const finished = readJsonl<EvalRecord>(recordsPath).map((record) => record.itemId);
    expect(finished).toEqual(items.slice(0, 3).map((item) => item.id));
    expect(existsSync(join(out, 'eval.json'))).toBe(false);

    const before = heldPlanner.requests.length;
    const resumed = await agentflow(['eval', '--resume', out, '--quiet']);
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    const sent = questionsOf(heldPlanner.requests.slice(before));
    expect(sent.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(sent.some((text) => text.includes(item.question))).toBe(!finished.includes(item.id));
    }
    const records = readJsonl<EvalRecord>(recordsPath);
    expect(records.map((record) => record.itemId).sort()).toEqual(items.map((item) => item.id).sort());
    const summary = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as EvalSummary;
    expect(summary).toMatchObject({ complete: true, total: SCRIPT.length, correct: CORRECT, accuracy: CORRECT / SCRIPT.length });
    expect(summary.passAtK).toBeUndefined();

    // The same command again finds every run recorded: no request at all. --json: events, then the summary.
    const again = heldPlanner.requests.length;
    const repeated = await agentflow([...args, '--json']);
    expect(repeated.status).toBe(0);
    expect(heldPlanner.requests.length).toBe(again);
    const lines = repeated.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; correct?: number; total?: number });
    expect(lines.map((line) => line.type)).toEqual(['stage-start', 'log', 'progress', 'stage-end', 'summary']);
    expect(lines.at(-1)).toMatchObject({ correct: CORRECT, total: SCRIPT.length });
    expect(readJsonl(recordsPath)).toHaveLength(SCRIPT.length);

    // Other settings are refused, naming the key.
    const [samples, limit] = await Promise.all([
      agentflow(['eval', '--resume', out, '--samples', '2']),
      agentflow([...commonArgs(out, heldPlanner.url), '--limit', '5']),
    ]);
    expect(samples.status).toBe(2);
    expect(samples.stderr).toContain('it was started with samples = 1 (--samples); this command gives 2');
    expect(limit.status).toBe(2);
    expect(limit.stderr).toContain('data.limit = 6 (--limit)');
  }, 120_000);
});

describe('agentflow eval: the stage mode and the command line', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm --filter @agentflow/trainer build\` first.`);
  });

  it('keeps --resume RUN_DIR for the eval stages of a run, and refuses benchmark options there', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'agentflow-eval-stage-')), 'nothing');
    const [stage, stray, bare, badPlanner] = await Promise.all([
      agentflow(['eval', '--resume', missing]),
      agentflow(['eval', '--resume', missing, '--samples', '2']),
      agentflow(['eval']),
      agentflow(['eval', '--planner', 'gpt4', '--data', 'x.json', '--out', join(missing, 'eval')]),
    ]);
    expect(stage.status).toBe(2);
    expect(stage.stderr).toContain('config.json is missing; expected a directory written by `agentflow run`');
    expect(stray.status).toBe(2);
    expect(stray.stderr).toContain('--samples: benchmark options, but --resume');
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('agentflow eval needs --resume RUN_DIR');
    expect(badPlanner.status).toBe(2);
    expect(badPlanner.stderr).toContain('--planner "gpt4" is not one of ollama:MODEL, openai:MODEL or local:DIR');
  }, 60_000);
});
