import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadCsvBenchmark, selectItems } from '@agentflow/eval';
import { beforeAll, describe, expect, it } from 'vitest';

const cli = resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');
const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', '..', 'shared', 'datasets');
const hasDatasets = existsSync(join(datasets, 'aime_1983_2024.csv'));
if (!hasDatasets) console.log(`dedup CLI: SKIPPED the real-data tests, no benchmark files at ${datasets}.`);

function agentflow(...args: string[]) {
  const result = spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const directory = mkdtempSync(join(tmpdir(), 'agentflow-dedup-'));
const file = (name: string, content: string) => {
  const path = join(directory, name);
  writeFileSync(path, content);
  return path;
};

const train = file(
  'train.csv',
  [
    '"id","problem","answer"',
    '2019_AIME_I_1,"Find the number of ordered pairs $(m, n)$ of positive integers with $m^2 n = 20^{20}$ .",231',
    '2024_AIME_I_7,"Find the largest possible real part of \\[(75+117i)z+\\frac{96+144i}{z}\\] where $z$ is a complex number with $|z|=4$ .",540',
    '2020_AIME_II_1,"A ""quoted"" problem, spread over',
    'two lines, about $\\frac{1}{2}$ of a cake shared by seven friends.",7',
  ].join('\n'),
);
const test = file(
  'test.json',
  JSON.stringify([
    { pid: '10', question: 'Find the largest possible real part of \\[(75+117i)z + \\frac{96+144i}{z}\\]where $z$ is a complex number with $|z|=4$.', answer: 540 },
    { pid: '11', question: 'How many positive divisors does $2024$ have that are perfect squares of odd primes?', answer: 1 },
  ]),
);
const clean = file('clean.jsonl', `${JSON.stringify({ id: 'c1', question: 'What is the sum of the first ten odd positive integers?', answer: '100' })}\n`);

describe('agentflow dedup', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
  });

  it('lists each suspected pair with its score', () => {
    const { status, stdout } = agentflow('dedup', '--train', train, '--test', test);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^1 suspected pair\(s\) between .*train\.csv \(3 items\) and .*test\.json \(2 items\), threshold 0\.5:$/m);
    expect(stdout).toMatch(/^ {2}1\.000 {2}train 2024_AIME_I_7 {2}~ {2}test 10$/m);
  });

  it('--json prints exactly {"pairs": [{train_id, test_id, score}]} with the ids of the files', () => {
    const { status, stdout } = agentflow('dedup', '--train', train, '--test', test, '--json');
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ pairs: [{ train_id: '2024_AIME_I_7', test_id: '10', score: 1 }] });
    const none = agentflow('dedup', '--train', train, '--test', clean, '--json');
    expect(JSON.parse(none.stdout)).toEqual({ pairs: [] });
  });

  it('--fail-on-leak exits 1 when a pair is found and 0 when none is', () => {
    const leak = agentflow('dedup', '--train', train, '--test', test, '--fail-on-leak');
    expect(leak.status).toBe(1);
    expect(leak.stderr).toContain('1 test item(s) leak into the training data');
    expect(agentflow('dedup', '--train', train, '--test', clean, '--fail-on-leak').status).toBe(0);
  });

  it('--threshold changes what counts, and a bad value is a usage error', () => {
    expect(JSON.parse(agentflow('dedup', '--train', train, '--test', test, '--json', '--threshold', '1').stdout).pairs).toHaveLength(1);
    const bad = agentflow('dedup', '--train', train, '--test', test, '--threshold', 'high');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--threshold must be a number between 0 and 1, got "high"');
    const missing = agentflow('dedup', '--train', join(directory, 'absent.csv'), '--test', test);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/Cannot read benchmark file .*absent\.csv/);
  });

  it.skipIf(!hasDatasets)('finds the AIME 2024 problems among the CSV rows, and none in the 1983-2023 rows', () => {
    const csv = join(datasets, 'aime_1983_2024.csv');
    const aime24 = join(datasets, 'aime24.json');
    const all = agentflow('dedup', '--train', csv, '--test', aime24, '--json', '--fail-on-leak');
    expect(all.status).toBe(1);
    const pairs = (JSON.parse(all.stdout) as { pairs: { train_id: string }[] }).pairs;
    expect(pairs).toHaveLength(14);
    expect(pairs.every((pair) => pair.train_id.startsWith('2024_AIME_'))).toBe(true);
    const old = selectItems(loadCsvBenchmark(csv), { years: { from: 1983, to: 2023 } });
    const oldFile = file('aime-1983-2023.jsonl', old.map((item) => `${JSON.stringify({ id: item.id, question: item.question, answer: item.answer })}\n`).join(''));
    const none = agentflow('dedup', '--train', oldFile, '--test', aime24, '--json', '--fail-on-leak');
    expect(none.status).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual({ pairs: [] });
  });
});
