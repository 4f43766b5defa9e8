/**
 * `agentflow eval --data NAME --datasets-dir DIR --judge SPEC` through the command's own parsing
 * (commander, in process), on slices of the real gpqa and bamboogle files with a loopback Ollama
 * planner and a loopback OpenAI-compatible judge. Skips, saying so, without the files.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type EvalSummary, loadAgentFlowBenchmark, stripAnswerInstruction } from '@agentflow/eval';
import { type ChatRequestBody, type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerEvalCommand } from '../eval';

const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', '..', 'shared', 'datasets');
const present = existsSync(join(datasets, 'gpqa.json')) && existsSync(join(datasets, 'bamboogle.json'));
if (!present) console.log(`eval-benchmark-names: SKIPPED, no gpqa.json and bamboogle.json in ${datasets} (set AGENTFLOW_DATASETS).`);

const KEY_ENV = 'AGENTFLOW_EVAL_JUDGE_TEST_KEY';
const KEY = 'loopback-judge';
const userPrompt = (body: ChatRequestBody) => body.messages.find((message) => message.role === 'user')?.content ?? '';

describe.skipIf(!present)('agentflow eval --data NAME --judge SPEC (loopback planner and judge)', () => {
  let planner: LoopbackChatServer;
  let judge: LoopbackChatServer;
  const answers = new Map<string, string>();

  beforeAll(async () => {
    process.env[KEY_ENV] = KEY;
    // First item right, second wrong: gpqa by letter, bamboogle by name.
    const [g0, g1] = loadAgentFlowBenchmark(join(datasets, 'gpqa.json'), 'gpqa');
    const [b0, b1] = loadAgentFlowBenchmark(join(datasets, 'bamboogle.json'), 'bamboogle');
    answers.set(stripAnswerInstruction(g0!.prompt), 'ABCD'[g0!.answerIndex!]!);
    answers.set(stripAnswerInstruction(g1!.prompt), 'ABCD'[(g1!.answerIndex! + 1) % 4]!);
    answers.set(stripAnswerInstruction(b0!.prompt), b0!.answer);
    answers.set(stripAnswerInstruction(b1!.prompt), 'Zyxqvu');
    planner = await startOllamaServer('scripted', (body) => {
      const text = body.messages.map((message) => message.content).join('\n');
      const answer = [...answers].find(([question]) => text.includes(question))?.[1];
      return JSON.stringify({ thought: 'scripted', action: 'finish', action_input: answer ?? 'none' });
    });
    // Answers the paper's three prompts: extraction picks the option of the letter, verification compares, direct compares.
    judge = await startOpenAiCompatibleServer('gpt-4o', KEY, (body) => {
      const prompt = userPrompt(body);
      const extraction = /## Model Response:\n(.*)\n\n## Answer Choices:\n([\s\S]*?)\n\n## Instructions/.exec(prompt);
      if (extraction) {
        const option = extraction[2]!.split('\n').find((line) => line.startsWith(`${extraction[1]}.`)) ?? '';
        return JSON.stringify({ analysis: 'letter', extracted_option: option });
      }
      const pair = /Correct Answer: (.*)\nExtracted Option: (.*)\n/.exec(prompt) ?? /Model response: (.*)\nCorrect answer: (.*)\n/.exec(prompt);
      return JSON.stringify({ analysis: 'compared', true_false: pair !== null && pair[1]!.toLowerCase() === pair[2]!.toLowerCase() });
    });
  });

  afterAll(async () => {
    delete process.env[KEY_ENV];
    await Promise.all([planner?.close(), judge?.close()]);
  });

  it.each([
    ['gpqa', 'choice_letter', 4],
    ['bamboogle', 'exact_match_f1', 2],
  ])('--data %s: both scores in eval.json and on stdout', async (name, checker, judgeRequests) => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-eval-names-')), name);
    const stdout: string[] = [];
    const program = new Command('agentflow').exitOverride();
    registerEvalCommand(program, { stdout: (text) => stdout.push(text), stderr: () => {} });
    const asked = judge.requests.length;
    await program.parseAsync(
      [
        'eval',
        ...['--planner', 'ollama:scripted', '--ollama-url', planner.url, '--no-python', '--quiet'],
        ...['--data', name, '--datasets-dir', datasets, '--limit', '2', '--concurrency', '1', '--out', out],
        ...['--judge', 'openai:gpt-4o', '--openai-base-url', judge.url, '--api-key-env', KEY_ENV],
      ],
      { from: 'user' },
    );
    const summary = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as EvalSummary;
    expect(summary.settings.data).toMatchObject({ path: join(datasets, `${name}.json`), benchmark: name });
    expect(summary.scores).toMatchObject({ deterministic: { checker, correct: 1, total: 2 }, judge: { model: 'openai:gpt-4o', correct: 1, judged: 2, failed: 0 } });
    expect(judge.requests.length - asked).toBe(judgeRequests);
    expect(stdout.join('')).toContain('judge 0.500 (1/2)');
  });
});

describe.skipIf(!present)('agentflow eval --tools (the tools block of a run config)', () => {
  it("offers the block's tools to the planner and records them with the eval; a block that is not a mapping is refused", async () => {
    const bamboogle = loadAgentFlowBenchmark(join(datasets, 'bamboogle.json'), 'bamboogle')[0]!;
    const planner = await startOllamaServer('scripted', () => JSON.stringify({ thought: 'known', action: 'finish', action_input: bamboogle.answer }));
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-eval-tools-')), 'bamboogle');
    const evalCommand = (...tools: string[]) => {
      const program = new Command('agentflow').exitOverride();
      registerEvalCommand(program, { stdout: () => {}, stderr: () => {} });
      const base = ['--planner', 'ollama:scripted', '--ollama-url', planner.url, '--no-python', '--quiet', '--data', 'bamboogle', '--datasets-dir', datasets];
      return program.parseAsync(['eval', ...base, '--limit', '1', ...tools, '--out', out], { from: 'user' });
    };
    try {
      await expect(evalCommand('--tools', '[wikipedia]')).rejects.toThrow("--tools must be a YAML mapping of the tools block, e.g. '{wikipedia: {}, webSearch: {apiKeyEnv: TAVILY_API_KEY}}'");
      await evalCommand('--tools', '{wikipedia: {baseUrl: "http://127.0.0.1:9/w/api.php"}}');
      const { settings } = JSON.parse(readFileSync(join(out, 'eval-config.json'), 'utf8'));
      expect(settings.tools).toEqual({ webSearch: null, wikipedia: { baseUrl: 'http://127.0.0.1:9/w/api.php' }, mcp: [] });
      expect(planner.requests[0]!.messages.map((message) => message.content).join('\n')).toContain('wikipedia');
    } finally {
      await planner.close();
    }
  });
});
