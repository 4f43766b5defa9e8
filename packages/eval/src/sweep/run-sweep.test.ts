import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSweep, type RunSweepSettings, sweepRuns } from './run-sweep';
import { readSweepFailure, type SweepRunRecord, type SweepRunSpec } from './sweep-run';

const GOALS = { gainPoints: 15, prmMseReduction: 0.3, stepsRatio: 0.7 };
const evaluation = (accuracy: number) => ({ accuracy, ci95: [Math.max(0, accuracy - 0.2), Math.min(1, accuracy + 0.2)] as [number, number] });

/** A run's result as the fake run below writes it: process credit learns in one step, outcome credit in two. */
function fakeResult(spec: SweepRunSpec): SweepRunRecord {
  const after = spec.arm === 'process' ? 0.5 + 0.1 * spec.seed : 0.4 + 0.1 * spec.seed;
  return {
    ...spec,
    summary: { before: evaluation(0.2), after: evaluation(after), paired: { pValue: 0.04 }, ...(spec.arm === 'process' ? { prm: { mse: 0.05, mse_constant: 0.1 } } : {}), durationSeconds: 12 },
    steps: 2,
    totalSteps: 2,
    curve: [
      { step: 0, rollouts: 0, accuracy: 0.2 },
      { step: 1, rollouts: 8, accuracy: spec.arm === 'process' ? after : (0.2 + after) / 2 },
      { step: 2, rollouts: 16, accuracy: after },
    ],
  };
}

function readRun(spec: SweepRunSpec): SweepRunRecord {
  const path = join(spec.dir, 'result.json');
  if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8'));
  const empty = { ...spec, steps: 0, totalSteps: 0, curve: [] };
  return existsSync(join(spec.dir, 'started')) ? { ...empty, failure: readSweepFailure(spec.dir) ?? 'unfinished' } : { ...empty, failure: 'not started' };
}

function settingsOf(dir: string, failing: Set<string>, calls: string[], lines: string[], arms = ['process', 'outcome']): RunSweepSettings<SweepRunSpec & { credit: string }> {
  const settings: RunSweepSettings<SweepRunSpec & { credit: string }> = {
    dir,
    runs: sweepRuns(
      arms.map((arm) => ({ arm, credit: arm })),
      [1, 2],
      dir,
    ),
    readRun,
    title: 'A sweep',
    command: 'sweep --seeds 1,2',
    goals: GOALS,
    plan: { seeds: [1, 2] },
    generatedBy: 'a test',
    now: () => new Date('2026-01-02T03:04:05.000Z'),
    isFinished: (spec) => existsSync(join(spec.dir, 'result.json')),
    isStarted: (spec) => existsSync(join(spec.dir, 'started')),
    log: (line) => lines.push(line),
    runOne: async (spec, how) => {
      calls.push(`${spec.credit}-${spec.seed}${how.resume ? ' (resumed)' : ''}`);
      mkdirSync(spec.dir, { recursive: true });
      writeFileSync(join(spec.dir, 'started'), '');
      // The table was rewritten after the run before this one: its row no longer reads "not started".
      const before = settings.runs[settings.runs.indexOf(spec) - 1];
      if (before) expect(readFileSync(join(dir, 'sweep.md'), 'utf8')).not.toContain(`| ${before.arm} | ${before.seed} | not started |`);
      if (failing.has(spec.dir)) throw new Error(`run ${spec.arm} ${spec.seed} broke`);
      writeFileSync(join(spec.dir, 'result.json'), JSON.stringify(fakeResult(spec)));
    },
  };
  return settings;
}

describe('runSweep', () => {
  it('runs arms x seeds in order, records a failure and goes on, then resumes only what is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eval-sweep-'));
    const calls: string[] = [];
    const lines: string[] = [];
    const broken = join(dir, 'outcome-seed1');
    const first = await runSweep(settingsOf(dir, new Set([broken]), calls, lines));
    expect(calls).toEqual(['process-1', 'process-2', 'outcome-1', 'outcome-2']);
    expect(first.failed.map((spec) => `${spec.arm} ${spec.seed}`)).toEqual(['outcome 1']);
    expect(readFileSync(join(broken, 'failure.txt'), 'utf8')).toBe('run outcome 1 broke\n');
    expect(lines).toContain('sweep: outcome, seed 1 failed: run outcome 1 broke\n');
    expect(lines[0]).toBe(`sweep: run 1 of 4: process, seed 1 (starting ${join(dir, 'process-seed1')})\n`);
    const table = readFileSync(first.paths.markdown, 'utf8');
    expect(table).toContain('| outcome | 1 | run outcome 1 broke |');
    expect(table).toContain('- process: 2 of 2 runs finished; mean gain +45.0 points [');
    expect(table).toContain('>= 15 points on 2 of 2; PRM MSE 50.0% [50.0, 50.0] below the constant\'s, >= 30% on 2 of 2.');
    expect(table).toMatch(/- outcome credit's mean final accuracy is 60\.0%; process credit's mean curve reaches it at step 1 of 2/);

    // Again, the broken run fixed: only it runs, resumed, and its failure is gone.
    calls.length = 0;
    lines.length = 0;
    const second = await runSweep(settingsOf(dir, new Set(), calls, lines));
    expect(calls).toEqual(['outcome-1 (resumed)']);
    expect(lines).toEqual([`sweep: run 3 of 4: outcome, seed 1 (resuming ${broken})\n`]);
    expect(second.failed).toEqual([]);
    expect(existsSync(join(broken, 'failure.txt'))).toBe(false);
    const results = JSON.parse(readFileSync(second.paths.json, 'utf8'));
    expect(Object.keys(results)).toEqual(['plan', 'arms', 'comparison', 'comparisons']);
    expect(results.comparisons).toEqual([results.comparison]);
    expect(results.plan).toEqual({ seeds: [1, 2] });
    expect(results.arms.map((arm: { arm: string; finished: number }) => [arm.arm, arm.finished])).toEqual([
      ['process', 2],
      ['outcome', 2],
    ]);
    expect(Object.keys(results.arms[0].runs[0])).toEqual(['arm', 'credit', 'seed', 'dir', 'steps', 'totalSteps', 'curve', 'before', 'after', 'prm', 'durationSeconds']);
    expect(results.comparison).toMatchObject({ process: 'process', outcome: 'outcome', processStep: 1, totalSteps: 2, ratio: 0.5 });
    expect(readFileSync(second.paths.html, 'utf8')).toContain('<footer>Generated 2026-01-02T03:04:05.000Z by a test.</footer>');
  });

  it('writes an unreached step ratio as "Infinity" in the results and "not reached" in the table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eval-sweep-'));
    const settings = settingsOf(dir, new Set(), [], []);
    // Outcome credit ends above anything process credit reaches.
    const result = await runSweep({ ...settings, readRun: (spec) => ({ ...fakeResult(spec), ...(spec.arm === 'outcome' ? { curve: [{ step: 0, rollouts: 0, accuracy: 0.95 }] } : {}) }) });
    const results = JSON.parse(readFileSync(result.paths.json, 'utf8'));
    expect(results.comparison).toMatchObject({ processStep: null, ratio: 'Infinity', ratio95: ['Infinity', 'Infinity'] });
    expect(readFileSync(result.paths.markdown, 'utf8')).toContain('never reaches it (fraction of the steps not reached, seed-bootstrap 95% interval [not reached, not reached]; goal <= 0.7)');
  });

  it('compares every other arm with outcome credit, one line each', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eval-sweep-'));
    // gigpo learns as outcome credit does here (the fake run's curve for any arm but process).
    const result = await runSweep(settingsOf(dir, new Set(), [], [], ['process', 'outcome', 'gigpo']));
    const results = JSON.parse(readFileSync(result.paths.json, 'utf8'));
    expect(results.comparisons.map((comparison: { process: string; ratio: number }) => [comparison.process, comparison.ratio])).toEqual([
      ['process', 0.5],
      ['gigpo', 1],
    ]);
    expect(results.comparison.process).toBe('process');
    const table = readFileSync(result.paths.markdown, 'utf8');
    expect(table).toMatch(/- outcome credit's mean final accuracy is 55\.0%; process credit's mean curve reaches it at step 1 of 2/);
    expect(table).toMatch(/- outcome credit's mean final accuracy is 55\.0%; gigpo credit's mean curve reaches it at step 2 of 2 \(fraction of the steps 1\.00/);
    expect(readFileSync(result.paths.html, 'utf8')).toContain("<li>outcome credit's mean final accuracy is 55.0%; gigpo credit's mean curve reaches it at step 2 of 2");
  });
});
