/**
 * `runBenchmarkEval` on a slice of each of AgentFlow's ten benchmark files, loaded by name from
 * `../shared/datasets` (or AGENTFLOW_DATASETS), with the planner behind a loopback Ollama server
 * and the judge behind a loopback OpenAI-compatible server, both through @agentflow/llm's HTTP
 * back ends. The planner answers the first item right and the second wrong; the judge reads the
 * paper's prompts (calculate_score_unified.py) and answers as their structured output asks. Says
 * so and skips when the files are absent.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { createOllamaModel, createOpenAICompatibleModel } from '@agentflow/llm';
import { type ChatRequestBody, type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHOICE_LETTERS } from '../answers/choice-options';
import { AGENTFLOW_BENCHMARK_NAMES, AGENTFLOW_BENCHMARKS, type AgentFlowBenchmarkName, loadAgentFlowBenchmark } from '../datasets/agentflow-benchmarks';
import { type BenchmarkItem, stripAnswerInstruction } from '../datasets/benchmark-item';
import type { EvalRecord } from './eval-record';
import type { EvalSummary } from './eval-summary';
import { parseToolsOption } from './dataset-option-values';
import { resolveBenchmarkEvalSettings } from './resolve-benchmark-eval-settings';
import { runBenchmarkEval } from './run-benchmark-eval';

const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'datasets');
const present = AGENTFLOW_BENCHMARK_NAMES.every((name) => existsSync(join(datasets, `${name}.json`)));
if (!present) console.log(`agentflow-benchmarks-eval: SKIPPED, the ten benchmark files are not all in ${datasets} (set AGENTFLOW_DATASETS to run this suite).`);

const KEY = 'loopback-judge-key';
const textOf = (body: ChatRequestBody) => body.messages.map((message) => message.content).join('\n');

/** The scripted right answer of an item, as an agent would finish with it. */
function rightAnswer(name: AgentFlowBenchmarkName, item: BenchmarkItem): string {
  const letter = CHOICE_LETTERS[item.answerIndex ?? -1] as string;
  if (name === 'gpqa') return letter; // the letter alone
  if (name === 'medqa') return (item.choices ?? [])[item.answerIndex ?? -1] as string; // the option's text alone
  if (name === 'gameof24') return item.references[0] as string;
  return item.answer;
}

/** A wrong answer that shares no word with any reference. */
function wrongAnswer(name: AgentFlowBenchmarkName, item: BenchmarkItem): string {
  const other = ((item.answerIndex ?? 0) + 1) % (item.choices?.length ?? 4);
  if (name === 'gpqa') return (item.choices ?? [])[other] as string;
  if (name === 'medqa') return `${CHOICE_LETTERS[other]}.`;
  if (name === 'gameof24') return '1+1+1+1';
  if (AGENTFLOW_BENCHMARKS[name].checker === 'math') return String(Number(item.answer) + 1);
  return 'Zyxqvu Wplk';
}

/** The judge as the paper's prompts expect it to answer: JSON for AnswerVerification or AnswerExtraction. */
function judgeReply(body: ChatRequestBody): string {
  const prompt = body.messages.find((message) => message.role === 'user')?.content ?? '';
  const extraction = /## Model Response:\n([\s\S]*?)\n\n## Answer Choices:\n([\s\S]*?)\n\n## Instructions:/.exec(prompt);
  if (extraction) {
    const response = (extraction[1] as string).trim();
    const options = (extraction[2] as string).split('\n');
    const picked =
      options.find((option) => option === response || option.slice(3) === response) ??
      options.find((option) => option.startsWith(`${response.replace(/\.$/, '')}.`)) ??
      'none of them';
    return JSON.stringify({ analysis: `The response points at ${picked}.`, extracted_option: picked });
  }
  const verification = /Correct Answer: ([\s\S]*?)\nExtracted Option: ([\s\S]*?)\n\nInstructions:/.exec(prompt);
  if (verification) {
    const [, correct, extracted] = verification as unknown as [string, string, string];
    const match = extracted === correct || extracted.slice(3) === correct;
    return JSON.stringify({ analysis: match ? 'Same option.' : 'Another option.', true_false: match });
  }
  const direct = /Model response: ([\s\S]*?)\nCorrect answer: ([\s\S]*?)\n\nResponse Format:/.exec(prompt);
  if (direct) {
    const [, response, correct] = direct as unknown as [string, string, string];
    const match = response === correct || (correct.startsWith('[') && correct.includes(`'${response}'`));
    return JSON.stringify({ analysis: `Compared ${response} with ${correct}.`, true_false: match });
  }
  throw new Error(`not one of the paper's judge prompts: ${prompt.slice(0, 200)}`);
}

describe.skipIf(!present)("AgentFlow's ten benchmarks through runBenchmarkEval (loopback planner and judge)", () => {
  let work: string;
  let planner: LoopbackChatServer;
  let judge: LoopbackChatServer;
  /** Per benchmark, the slice and what the planner answers for each question. */
  const script = new Map<string, string>();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'agentflow-ten-benchmarks-'));
    for (const name of AGENTFLOW_BENCHMARK_NAMES) {
      const [right, wrong] = loadAgentFlowBenchmark(join(datasets, `${name}.json`), name).slice(0, 2) as [BenchmarkItem, BenchmarkItem];
      script.set(stripAnswerInstruction(right.prompt), rightAnswer(name, right));
      script.set(stripAnswerInstruction(wrong.prompt), wrongAnswer(name, wrong));
    }
    planner = await startOllamaServer('scripted', (body) => {
      const text = textOf(body);
      const question = [...script.keys()].find((candidate) => text.includes(candidate));
      if (question === undefined) throw new Error(`no scripted question in ${text.slice(0, 200)}`);
      return JSON.stringify({ thought: 'scripted', action: 'finish', action_input: script.get(question) });
    });
    judge = await startOpenAiCompatibleServer('gpt-4o', KEY, judgeReply);
  });

  afterAll(async () => {
    await Promise.all([planner?.close(), judge?.close()]);
  });

  const evalOf = async (name: AgentFlowBenchmarkName, withJudge: boolean) => {
    const settings = resolveBenchmarkEvalSettings({
      planner: 'ollama:scripted',
      data: { path: name, limit: 2 },
      datasetsDir: datasets,
      python: false,
      ...(withJudge ? { judge: 'openai:gpt-4o' } : {}),
    });
    const root = join(work, `${name}-${withJudge ? 'judged' : 'rules'}`);
    const judgeRequests = judge.requests.length;
    await runBenchmarkEval({
      root,
      settings,
      concurrency: 1,
      openModels: async () => ({
        planner: createOllamaModel({ model: 'scripted', endpoints: [planner.url] }),
        actionSchemaStyle: 'flat',
        ...(withJudge ? { judge: createOpenAICompatibleModel({ model: 'gpt-4o', endpoints: [judge.url], apiKeyEnv: 'JUDGE_KEY', env: { JUDGE_KEY: KEY } }) } : {}),
      }),
    });
    return {
      settings,
      records: readJsonl<EvalRecord>(join(root, 'eval.jsonl')),
      summary: JSON.parse(readFileSync(join(root, 'eval.json'), 'utf8')) as EvalSummary,
      judgeRequests: judge.requests.slice(judgeRequests),
    };
  };

  it.each(AGENTFLOW_BENCHMARK_NAMES.map((name) => [name]))('%s: the right answer scores 1 and the wrong one 0 under the rule checker and the judge', async (name) => {
    const benchmark = AGENTFLOW_BENCHMARKS[name];
    const { settings, records, summary, judgeRequests } = await evalOf(name, true);
    expect(settings.data).toMatchObject({ path: join(datasets, `${name}.json`), format: 'agentflow-json', benchmark: name, limit: 2 });
    expect(records.map((record) => [record.correct, record.judge?.correct])).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(records.every((record) => record.judge?.mode === benchmark.judge)).toBe(true);
    expect(summary.benchmark).toBe(name);
    expect(summary.scores.deterministic).toMatchObject({ checker: benchmark.checker, correct: 1, total: 2, accuracy: 0.5 });
    expect(summary.scores.judge).toMatchObject({ model: 'openai:gpt-4o', correct: 1, judged: 2, failed: 0, accuracy: 0.5 });
    // One verification per run; multiple choice extracts the option first.
    expect(judgeRequests).toHaveLength(benchmark.judge === 'extract-then-verify' ? 4 : 2);
    if (benchmark.checker === 'exact_match_f1') {
      expect(records.map((record) => record.f1)).toEqual([1, 0]);
      expect(summary.scores.deterministic.f1).toBe(0.5);
    } else {
      expect(summary.scores.deterministic.f1).toBeNull();
    }
  });

  it('shows a multiple-choice item its options, and records the option the judge extracted', async () => {
    const { records } = await evalOf('gpqa', true);
    const items = loadAgentFlowBenchmark(join(datasets, 'gpqa.json'), 'gpqa').slice(0, 2);
    const asked = planner.requests.map(textOf).find((text) => text.includes(items[0]!.question)) ?? '';
    expect(asked).toContain(`Choices:\nA. ${items[0]!.choices![0]}`);
    expect(records[0]!.judge?.extractedOption).toBe(`${CHOICE_LETTERS[items[0]!.answerIndex!]}. ${items[0]!.choices![items[0]!.answerIndex!]}`);
  });

  it("offers the tools block's wikipedia beside python: a bamboogle run searches a loopback MediaWiki API, then answers", async () => {
    const [item] = loadAgentFlowBenchmark(join(datasets, 'bamboogle.json'), 'bamboogle');
    const question = stripAnswerInstruction(item!.prompt);
    const searches: URL[] = [];
    const wiki = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      searches.push(url);
      const page = { pageid: 1, index: 1, title: 'Loopback article', extract: `LOOPBACK-WIKI: the answer is ${item!.answer}.`, fullurl: 'http://127.0.0.1/wiki/Loopback' };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ query: { pages: [page] } }));
    });
    await new Promise<void>((listening) => wiki.listen(0, '127.0.0.1', listening));
    const wikiUrl = `http://127.0.0.1:${(wiki.address() as AddressInfo).port}/w/api.php`;
    const searcher = await startOllamaServer('searcher', (body) => {
      const text = textOf(body);
      return text.includes('LOOPBACK-WIKI')
        ? JSON.stringify({ thought: 'found it', action: 'finish', action_input: item!.answer })
        : JSON.stringify({ thought: 'look it up', action: 'wikipedia', action_input: { query: question.slice(0, 40) } });
    });
    try {
      const settings = resolveBenchmarkEvalSettings({ planner: 'ollama:searcher', data: { path: 'bamboogle', limit: 1 }, datasetsDir: datasets, python: false, tools: parseToolsOption(`{wikipedia: {baseUrl: "${wikiUrl}"}}`) });
      expect(settings.tools).toEqual({ webSearch: null, wikipedia: { baseUrl: wikiUrl }, mcp: [] });
      const root = join(work, 'bamboogle-wikipedia');
      await runBenchmarkEval({ root, settings, openModels: async () => ({ planner: createOllamaModel({ model: 'searcher', endpoints: [searcher.url] }), actionSchemaStyle: 'flat' }) });
      // The planner saw the tool in its catalogue, called it, and answered from its result.
      expect(textOf(searcher.requests[0]!)).toContain('wikipedia');
      expect(searches).toHaveLength(1);
      expect(searches[0]!.searchParams.get('gsrsearch')).toBe(question.slice(0, 40));
      const [trajectory] = readJsonl<Trajectory>(join(root, 'trajectories.jsonl'));
      expect(trajectory!.steps.map((step) => step.action?.action)).toEqual(['wikipedia', 'finish']);
      expect(readJsonl<EvalRecord>(join(root, 'eval.jsonl')).map((record) => record.correct)).toEqual([true]);
      // Recorded with the eval: a resume with other tools is another experiment.
      expect(JSON.parse(readFileSync(join(root, 'eval-config.json'), 'utf8')).settings.tools.wikipedia).toEqual({ baseUrl: wikiUrl });
      expect(() => parseToolsOption('[wikipedia]')).toThrow("--tools must be a YAML mapping of the tools block");
      expect(() => resolveBenchmarkEvalSettings({ planner: 'ollama:searcher', data: { path: 'bamboogle' }, datasetsDir: datasets, tools: { wikipedia: { baseUrl: 'not a url' } } })).toThrow(/tools\.wikipedia\.baseUrl/);
    } finally {
      await searcher.close();
      await new Promise((closed) => wiki.close(closed));
    }
  });

  it('without a judge, reports the rule checker alone and asks no judge', async () => {
    const { records, summary, judgeRequests } = await evalOf('bamboogle', false);
    expect(records.map((record) => [record.correct, record.judge])).toEqual([
      [true, null],
      [false, null],
    ]);
    expect(summary.scores).toMatchObject({ deterministic: { checker: 'exact_match_f1', correct: 1, total: 2, f1: 0.5 }, judge: null });
    expect(judgeRequests).toHaveLength(0);
  });
});
