import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'sweep-short.yaml');

function agentflow(...args: string[]) {
  return spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 300_000 });
}

describe('agentflow sweep (two seeds, three credits, two DAPO steps)', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it('runs every seed and credit, writes the table and the page, and continues where it stopped', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-sweep-')), 'sweep');
    const args = ['sweep', '--seeds', '1-2', '--credit', 'process,outcome,process-min', '--config', config, '--out', out, '--quiet'];
    const first = agentflow(...args);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Sweep table: ${out}/sweep.md`);
    expect(first.stderr.match(/^sweep: run \d of 6/gm)).toHaveLength(6);
    for (const run of ['process-seed1', 'process-seed2', 'outcome-seed1', 'outcome-seed2', 'process-min-seed1', 'process-min-seed2']) {
      expect(existsSync(join(out, run, 'summary.json')), run).toBe(true);
    }
    // Seed 1's runs share their config but for the credit: outcome's run starts from process's
    // warm start, evaluation and collected trajectories (the same stage records), and runs the
    // rest itself; PURE's also takes over process's labels and PRM, which its credit reads too.
    const state = (run: string) => JSON.parse(readFileSync(join(out, run, 'state.json'), 'utf8')).stages;
    const file = (run: string, path: string) => readFileSync(join(out, run, path), 'utf8');
    expect(first.stderr).toContain(`sweep: outcome, seed 1 starts from the warm start, eval-before and collect of ${join(out, 'process-seed1')}`);
    expect(state('outcome-seed1')['warm-start']).toEqual(state('process-seed1')['warm-start']);
    expect(state('outcome-seed1')['eval-before']).toEqual(state('process-seed1')['eval-before']);
    expect(state('outcome-seed1').collect).toEqual(state('process-seed1').collect);
    expect(state('outcome-seed1').train).toBeDefined();
    expect(state('process-seed1')['warm-start'].result.heldOutTasks).toBe(4);
    expect(state('outcome-seed1').label).toBeUndefined();
    expect(first.stderr).toContain(
      `sweep: process-min, seed 1 starts from the warm start, eval-before, collect, label and train-prm of ${join(out, 'process-seed1')}`,
    );
    expect(state('process-min-seed1')['train-prm']).toEqual(state('process-seed1')['train-prm']);
    expect(file('process-min-seed1', 'labels.jsonl')).toBe(file('process-seed1', 'labels.jsonl'));
    expect(file('process-min-seed1', 'checkpoints/prm/prm-head.safetensors')).toBe(file('process-seed1', 'checkpoints/prm/prm-head.safetensors'));
    expect(state('process-min-seed1').train).toBeDefined();

    const table = readFileSync(join(out, 'sweep.md'), 'utf8');
    const rows = table.split('\n').filter((line) => /^\| (process|outcome|process-min) \| \d \|/.test(line));
    expect(rows.map((row) => row.split('|').slice(1, 3).map((cell) => cell.trim()))).toEqual([
      ['process', '1'],
      ['process', '2'],
      ['outcome', '1'],
      ['outcome', '2'],
      ['process-min', '1'],
      ['process-min', '2'],
    ]);
    expect(rows.every((row) => row.includes('2 / 2') && row.includes('(held-out '))).toBe(true);
    expect(table).toMatch(/process: 2 of 2 runs finished; mean gain [+-]\d+\.\d points \[[+-]\d+\.\d, [+-]\d+\.\d\]/);
    expect(table).toMatch(/outcome credit's mean final accuracy is \d+\.\d%; process credit's mean curve/);
    const results = JSON.parse(readFileSync(join(out, 'sweep-results.json'), 'utf8'));
    expect(results.arms.map((arm: { arm: string; finished: number }) => [arm.arm, arm.finished])).toEqual([
      ['process', 2],
      ['outcome', 2],
      ['process-min', 2],
    ]);
    // Curves at steps 0, 1 and 2 for each arm: the warm planner, then each DAPO step.
    expect(results.arms[0].curve.map((point: { step: number }) => point.step)).toEqual([0, 1, 2]);
    expect(results.comparison.totalSteps).toBe(2);
    const page = readFileSync(join(out, 'sweep.html'), 'utf8');
    expect(page.match(/<svg /g)).toHaveLength(2);
    expect(page).toContain('Held-out accuracy against rollouts spent');
    expect(page).not.toMatch(/<script/);
    // Each run's report says at its top what its stages' checks found.
    const report = readFileSync(join(out, 'process-seed1', 'report.html'), 'utf8');
    expect(report).toMatch(/<ul class="checks[^"]*"><li class="ok">The warm start passed its check/);
    expect(report).toContain('DAPO ran all 2 of 2 steps.');

    // Run again with one run gone: only that one runs; the finished ones are kept.
    rmSync(join(out, 'outcome-seed2'), { recursive: true });
    const second = agentflow(...args);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr.match(/^sweep: run \d of 6.*$/gm)).toEqual([`sweep: run 4 of 6: outcome, seed 2 (starting ${join(out, 'outcome-seed2')})`]);
    expect(second.stderr).toContain(`sweep: outcome, seed 2 starts from the warm start, eval-before and collect of ${join(out, 'process-seed2')}`);
    expect(readFileSync(join(out, 'sweep.md'), 'utf8').split('\n').filter((line) => /^\| (process|outcome|process-min) \| \d \|/.test(line))).toHaveLength(6);

    // Another plan into the same directory is refused; --resume continues the recorded one.
    const other = agentflow('sweep', '--seeds', '1-3', '--config', config, '--out', out, '--quiet');
    expect(other.status).toBe(2);
    expect(other.stderr).toContain(`${join(out, 'sweep.json')} records another sweep`);
    const resumed = agentflow('sweep', '--resume', out, '--quiet');
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/^sweep: run/m);
  }, 300_000);

  it('refuses bad seeds and credits with the value and what was expected', () => {
    const seeds = agentflow('sweep', '--seeds', '4-1', '--out', join(tmpdir(), 'never'));
    expect(seeds.status).toBe(2);
    expect(seeds.stderr).toContain('--seeds "4-1": expected seeds like 0-4, 0,2,7 or 3');
    const credit = agentflow('sweep', '--seeds', '0-1', '--credit', 'process,reward');
    expect(credit.status).toBe(2);
    expect(credit.stderr).toContain('"reward" is not one');
    const seed = agentflow('sweep', '--seeds', '0-1', '--set', 'seed=3');
    expect(seed.status).toBe(2);
    expect(seed.stderr).toContain("a sweep sets each run's seed from --seeds");
  });
});
