/**
 * `runBenchmarkEval` with an in-process scripted planner on a JSONL file: the eval directory's
 * files, a resume that sends nothing for recorded runs, the refusal of other settings, and a
 * failing model stopping the eval with its records kept.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, type ChatRequest, type LanguageModel, readJsonl, type RunEvent } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { wilsonInterval } from '../metrics/accuracy';
import type { BenchmarkEvalModels } from './eval-agent';
import type { EvalRecord } from './eval-record';
import type { EvalSummary } from './eval-summary';
import { resolveBenchmarkEvalSettings } from './resolve-benchmark-eval-settings';
import { rewriteEvalPage, runBenchmarkEval } from './run-benchmark-eval';

const ITEMS = [
  { id: 'a', question: 'What is 2 + 3?', answer: '5' },
  { id: 'b', question: 'What is 4 + 4?', answer: '8' },
  { id: 'c', question: 'What is 6 + 1?', answer: '7' },
];

/** Finishes right on a and c, wrong on b; `failOn` makes a question's request fail for good. */
function scriptedPlanner(failOn?: string): LanguageModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    specificationVersion: 'v1',
    provider: 'scripted',
    modelId: 'scripted',
    requests,
    async chat(request) {
      requests.push(request);
      const text = request.messages.map((message) => message.content).join('\n');
      const item = ITEMS.find((candidate) => text.includes(candidate.question));
      if (!item) throw new Error(`no scripted item in ${text.slice(0, 200)}`);
      if (item.id === failOn) throw new AgentFlowError({ code: 'RUNTIME_ERROR', message: 'the endpoint is gone.' });
      const answer = item.id === 'b' ? '9' : item.answer;
      return { text: JSON.stringify({ thought: 'scripted', action: 'finish', action_input: answer }), finishReason: 'stop', model: 'scripted' };
    },
  };
}

function setup() {
  const work = mkdtempSync(join(tmpdir(), 'agentflow-benchmark-eval-'));
  const data = join(work, 'items.jsonl');
  writeFileSync(data, `${ITEMS.map((item) => JSON.stringify(item)).join('\n')}\n`);
  const settings = resolveBenchmarkEvalSettings({ planner: 'scripted', data: { path: data }, python: false, samples: 2 });
  return { work, data, settings };
}

const modelsOf = (planner: LanguageModel): (() => Promise<BenchmarkEvalModels>) => async () => ({ planner, actionSchemaStyle: 'flat' });
const clock = () => new Date('2025-01-01T00:00:00Z');

describe('runBenchmarkEval', () => {
  it('records every (item, sample), summarizes them, and resumes without a request for a recorded run', async () => {
    const { work, settings } = setup();
    expect(settings).toMatchObject({ template: 'full', temperature: 0.8, maxSteps: 10, data: { format: 'jsonl', limit: null }, memory: null });
    const root = join(work, 'eval');
    const planner = scriptedPlanner();
    const events: RunEvent[] = [];
    const { directory, summary } = await runBenchmarkEval({
      root,
      settings,
      openModels: modelsOf(planner),
      concurrency: 1,
      connection: { endpoint: 'in-process' },
      emit: (event) => events.push(event),
      now: clock,
    });
    const interval = wilsonInterval(4, 6);
    expect(summary).toMatchObject({ complete: true, items: 3, total: 6, correct: 4, ci95: [interval.lower, interval.upper], updatedAt: clock().toISOString() });
    expect(summary.passAtK).toEqual({ k: 2, value: 2 / 3 });
    expect(JSON.parse(readFileSync(directory.summary, 'utf8'))).toEqual(summary);
    const records = readJsonl<EvalRecord>(directory.records);
    expect(records.map((record) => `${record.itemId}#${record.sample}`)).toEqual(['a#0', 'a#1', 'b#0', 'b#1', 'c#0', 'c#1']);
    expect(new Set(records.map((record) => record.seed)).size).toBe(6);
    expect(readJsonl(directory.trajectories)).toHaveLength(6);
    expect(JSON.parse(readFileSync(directory.config, 'utf8'))).toMatchObject({ kind: 'agentflow-eval', connection: { endpoint: 'in-process' } });
    expect(events.filter((event) => event.type === 'progress')).toHaveLength(6);

    // eval.html: self-contained, the summary with its interval and pass@k, one filterable row per run.
    const page = readFileSync(directory.page, 'utf8');
    expect(page).toContain(`66.7% <span class="ci">95% CI (Wilson) [${(100 * interval.lower).toFixed(1)}%, ${(100 * interval.upper).toFixed(1)}%]</span>`);
    expect(page).toContain('<tr><th>pass@2</th><td>66.7%</td></tr>');
    const rows = [...page.matchAll(/<tr class="(right|wrong)" data-correct="(true|false)"><td>([^<]+)<\/td><td class="text"><div class="clamp" title="[^"]*">([^<]+)<\/div><\/td><td class="text">([^<]+)<\/td><td class="text">([^<]+)<\/td><td class="mark">(.)<\/td><td>(\d+)<\/td><td>(\d+)<\/td>/g)];
    expect(rows.map((row) => [row[3], row[4], row[5], row[6], row[7]])).toEqual([
      ['a', 'What is 2 + 3?', '5', '5', '✔'],
      ['a#1', 'What is 2 + 3?', '5', '5', '✔'],
      ['b', 'What is 4 + 4?', '9', '8', '✘'],
      ['b#1', 'What is 4 + 4?', '9', '8', '✘'],
      ['c', 'What is 6 + 1?', '7', '7', '✔'],
      ['c#1', 'What is 6 + 1?', '7', '7', '✔'],
    ]);
    expect(page).toContain('<input id="q" type="search"');
    expect(page).not.toMatch(/\b(src|href)=|https?:\/\//);
    // `agentflow report EVAL_DIR` renders the same page again; without the data file, rows keep their answers.
    rmSync(directory.page);
    expect(rewriteEvalPage(root, clock)).toBe(directory.page);
    expect(readFileSync(directory.page, 'utf8')).toBe(page);
    rmSync(settings.data.path);
    rewriteEvalPage(root, clock);
    expect(readFileSync(directory.page, 'utf8').match(/\(not in the data file\)/g)).toHaveLength(6);
    writeFileSync(settings.data.path, `${ITEMS.map((item) => JSON.stringify(item)).join('\n')}\n`);

    // Again: every run is recorded, so no model is opened and nothing is asked.
    const again = await runBenchmarkEval({
      root,
      settings,
      openModels: () => Promise.reject(new Error('opened')),
      now: clock,
    });
    expect(again.summary).toEqual(summary);
    expect(planner.requests).toHaveLength(6);

    // Other settings are refused, naming the key.
    await expect(runBenchmarkEval({ root, settings: { ...settings, samples: 3 }, openModels: modelsOf(planner) })).rejects.toThrow(
      'it was started with samples = 2; these settings give 3',
    );
  });

  it('stops on a model that fails for good, keeps the records so far, and continues on the next call', async () => {
    const { work, settings } = setup();
    const root = join(work, 'eval');
    const failing = scriptedPlanner('b');
    const stopped = runBenchmarkEval({ root, settings, openModels: modelsOf(failing), concurrency: 1, resumeCommand: (dir) => `resume ${dir}` });
    await expect(stopped).rejects.toThrow(`The planner failed: the endpoint is gone. 2 of 6 runs are recorded in ${root}; resume ${root} continues.`);
    expect(readJsonl<EvalRecord>(join(root, 'eval.jsonl')).map((record) => record.itemId)).toEqual(['a', 'a']);
    expect(JSON.parse(readFileSync(join(root, 'eval.json'), 'utf8')) as EvalSummary).toMatchObject({ complete: false, total: 2 });

    const planner = scriptedPlanner();
    const { summary } = await runBenchmarkEval({ root, settings, openModels: modelsOf(planner), concurrency: 2 });
    expect(summary).toMatchObject({ complete: true, total: 6, correct: 4 });
    expect(planner.requests.some((request) => request.messages.some((message) => message.content.includes(ITEMS[0]!.question)))).toBe(false);
  });

  it('scores with the judge the settings name, and stops on a judge that fails for good without recording the run', async () => {
    const { work, settings } = setup();
    const judged = { ...settings, samples: 1, judge: 'scripted-judge' };
    const verdicts: string[] = [];
    const judge = (failOn?: string): LanguageModel => ({
      specificationVersion: 'v1',
      provider: 'scripted',
      modelId: 'judge',
      async chat(request) {
        const prompt = request.messages.map((message) => message.content).join('\n');
        const response = /Model response: (.*)/.exec(prompt)?.[1] ?? '';
        verdicts.push(response);
        if (response === failOn) throw new AgentFlowError({ code: 'RUNTIME_ERROR', message: 'the judge is gone.' });
        return { text: JSON.stringify({ analysis: 'scripted', true_false: response !== '9' }), finishReason: 'stop', model: 'judge' };
      },
    });
    const root = join(work, 'judged');
    const models = (failOn?: string) => async (): Promise<BenchmarkEvalModels> => ({ planner: scriptedPlanner(), actionSchemaStyle: 'flat', judge: judge(failOn) });
    // The judge fails on c's answer (7): a and b are recorded, c is not, and the eval stops with the judge's error.
    await expect(runBenchmarkEval({ root, settings: judged, openModels: models('7'), concurrency: 1 })).rejects.toThrow('The judge failed: the judge is gone. 2 of 3 runs are recorded');
    expect(readJsonl<EvalRecord>(join(root, 'eval.jsonl')).map((record) => [record.itemId, record.judge?.correct])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    const { summary } = await runBenchmarkEval({ root, settings: judged, openModels: models(), concurrency: 1 });
    expect(summary.scores.judge).toMatchObject({ model: 'scripted-judge', correct: 2, judged: 3, failed: 0 });
    expect(verdicts).toEqual(['5', '9', '7', '7']);
    await expect(runBenchmarkEval({ root: join(work, 'no-judge'), settings: judged, openModels: modelsOf(scriptedPlanner()) })).rejects.toThrow(
      'The settings name judge "scripted-judge" but the models lack a judge',
    );
  });

  it('refuses a folder that holds other files, and a fixed-modules name without the model', async () => {
    const { work, settings } = setup();
    const used = join(work, 'used');
    writeFileSync(join(work, 'note.txt'), 'x');
    await expect(runBenchmarkEval({ root: work, settings, openModels: modelsOf(scriptedPlanner()) })).rejects.toThrow('holds files but no eval-config.json');
    // A CLI names its options in the same refusal.
    const wording = { folderOption: '--out', optionOf: (key: string) => (key === 'samples' ? '--samples' : undefined), givenBy: 'this command gives' };
    await expect(runBenchmarkEval({ root: work, settings, openModels: modelsOf(scriptedPlanner()), wording })).rejects.toThrow(
      `--out ${work} holds files but no eval-config.json; an eval starts in an empty or new folder. Choose another --out.`,
    );
    await expect(
      runBenchmarkEval({ root: used, settings: { ...settings, fixedModules: 'judge' }, openModels: modelsOf(scriptedPlanner()) }),
    ).rejects.toThrow('The settings name fixedModules "judge" but the models lack a fixed model');
    expect(existsSync(join(used, 'eval.jsonl'))).toBe(false);
  });
});
