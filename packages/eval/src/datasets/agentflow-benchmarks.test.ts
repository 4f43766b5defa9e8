import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBenchmarkAnswer } from '../answers/benchmark-checker';
import { CHOICE_LETTERS } from '../answers/choice-options';
import { AGENTFLOW_BENCHMARK_NAMES, AGENTFLOW_BENCHMARKS, benchmarkOfPath, loadAgentFlowBenchmark, resolveBenchmarkData } from './agentflow-benchmarks';
import { loadAgentFlowJson } from './load-benchmark';

const record = (pid: string, question: string, extra: Record<string, unknown> = {}) => ({ pid, question, answer: 'x', query: question, ...extra });

describe('resolveBenchmarkData', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentflow-datasets-'));
  writeFileSync(join(folder, 'bamboogle.json'), JSON.stringify([record('0', 'Who?')]));

  it('finds a name in the datasets folder given, else $AGENTFLOW_DATASETS, else ./datasets', () => {
    const expected = { path: join(folder, 'bamboogle.json'), benchmark: 'bamboogle' };
    expect(resolveBenchmarkData('bamboogle', { datasetsDir: folder, env: {} })).toEqual(expected);
    expect(resolveBenchmarkData('bamboogle', { env: { AGENTFLOW_DATASETS: folder } })).toEqual(expected);
    const project = mkdtempSync(join(tmpdir(), 'agentflow-project-'));
    mkdirSync(join(project, 'datasets'));
    writeFileSync(join(project, 'datasets', 'gaia.json'), '[]');
    expect(resolveBenchmarkData('gaia', { env: {}, cwd: project })).toEqual({ path: join(project, 'datasets', 'gaia.json'), benchmark: 'gaia' });
  });

  it('says where it looked when the file is missing', () => {
    expect(() => resolveBenchmarkData('medqa', { datasetsDir: folder, env: {} })).toThrow(
      `medqa names an AgentFlow benchmark, but ${join(folder, 'medqa.json')} is missing (the datasets folder given). Put lupantech/AgentFlow's test/medqa/data/data.json there as medqa.json`,
    );
  });

  it('takes anything else as a path, a benchmark when its name says so', () => {
    expect(resolveBenchmarkData('data/aime24.json', { cwd: '/work' })).toEqual({ path: '/work/data/aime24.json', benchmark: 'aime24' });
    expect(benchmarkOfPath('/AgentFlow/test/gpqa/data/data.json')).toBe('gpqa');
    expect(benchmarkOfPath('/data/my-questions.json')).toBeNull();
    expect(benchmarkOfPath('/data/gpqa.jsonl')).toBeNull();
  });
});

describe('repeated ids and multiple-choice answers', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentflow-benchmark-files-'));

  it('refuses a repeated id by default, and makes it unique by position on request, keeping the file id', () => {
    const path = join(folder, 'repeated.json');
    writeFileSync(path, JSON.stringify([record('0', 'First?'), record('1', 'Second?'), record('0', 'Third?')]));
    expect(() => loadAgentFlowJson(path)).toThrow(`${path}: id "0" appears more than once; ids must be unique`);
    const items = loadAgentFlowJson(path, undefined, undefined, 'by-position');
    expect(items.map((item) => [item.id, item.question, item.metadata.fileId])).toEqual([
      ['0', 'First?', undefined],
      ['1', 'Second?', undefined],
      ['0@2', 'Third?', '0'],
    ]);
  });

  it('refuses a multiple-choice answer that names none of its options', () => {
    const path = join(folder, 'medqa.json');
    writeFileSync(path, JSON.stringify([{ ...record('0', 'Which?'), answer: 'Crohn disease', options: ['A. Oral ulcers', 'B. Colorectal cancer'] }]));
    expect(() => loadAgentFlowBenchmark(path, 'medqa')).toThrow(`${path} item "0": the answer "Crohn disease" names none (or several) of the options`);
  });
});

const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'datasets');
const present = AGENTFLOW_BENCHMARK_NAMES.every((name) => existsSync(join(datasets, `${name}.json`)));
if (!present) console.log(`agentflow-benchmarks: real-file tests SKIPPED, the ten files are not all in ${datasets} (set AGENTFLOW_DATASETS).`);

describe.skipIf(!present)(`the ten benchmark files in ${datasets}`, () => {
  const load = (name: (typeof AGENTFLOW_BENCHMARK_NAMES)[number]) => loadAgentFlowBenchmark(join(datasets, `${name}.json`), name);

  it('load by name with the documented counts, and every reference checks right under its checker', () => {
    const counts = Object.fromEntries(AGENTFLOW_BENCHMARK_NAMES.map((name) => [name, load(name).length]));
    expect(counts).toEqual({ aime24: 30, amc23: 40, gameof24: 300, bamboogle: 125, '2wiki': 200, hotpotqa: 100, musique: 200, gaia: 127, gpqa: 300, medqa: 300 });
    for (const name of AGENTFLOW_BENCHMARK_NAMES) {
      const { checker } = AGENTFLOW_BENCHMARKS[name];
      for (const item of load(name)) {
        expect(item.question.trim(), `${name} ${item.id}`).not.toBe('');
        const right = checker === 'choice_letter' ? (CHOICE_LETTERS[item.answerIndex ?? -1] as string) : (item.references[0] as string);
        expect(checkBenchmarkAnswer(`<answer>${right}</answer>`, item, checker).correct, `${name} ${item.id}: ${right}`).toBe(true);
      }
    }
  });

  it("reads GPQA's and MedQA's options and answers, and MedQA's repeated pids by position", () => {
    const gpqa = load('gpqa');
    expect(gpqa.every((item) => item.answerIndex === Number(item.metadata.answer_idx) && item.choices?.length === 4)).toBe(true);
    expect(gpqa[0]).toMatchObject({ choices: ['0.9', '0.7', '0.1', '0.3'], answerIndex: 0, answer: 'A. 0.9' });
    const medqa = load('medqa');
    expect(new Set(medqa.map((item) => item.id)).size).toBe(300);
    // The paper's run (indices 0-99) is the first 100 items, which keep their pids.
    expect(medqa.slice(0, 100).map((item) => item.id)).toEqual(Array.from({ length: 100 }, (_, index) => String(index)));
    const repeated = medqa.find((item) => item.id === '0@100');
    expect(repeated?.metadata.fileId).toBe('0');
    expect(repeated?.question).not.toBe(medqa[0]?.question);
    expect(medqa[0]).toMatchObject({ answer: 'Colorectal cancer', answerIndex: 2 });
  });
});
