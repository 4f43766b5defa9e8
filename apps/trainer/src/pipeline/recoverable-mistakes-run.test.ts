/**
 * `agentflow run` on the shortened embedded default with the world's recoverable mistakes
 * (stale facts, a step budget per task, a teacher that recovers), through the built CLI: the
 * preflight takes a sufficient `policy.maxSteps`, every collected trajectory keeps to its
 * task's budget, and summary.json says where the outcome and the step labels disagree.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { createTaskWorld, runSummarySchema } from '@agentflow/eval';
import { beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');
/** Above every task's budget here (at most 4 lookups and checks, python, finish, and the slack of 2): the budgets are what stop a run. */
const MAX_STEPS = 8;
const SETTINGS = ['task.decoyRate=0.5', 'task.stepSlack=2', 'task.teacher.recoveryRate=0.3', `policy.maxSteps=${MAX_STEPS}`, 'label.maxTrajectories=12', 'train.totalSteps=1'];

describe('agentflow run with recoverable mistakes (shortened embedded default)', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it("keeps each task's step budget and reports where the outcome misleads about single steps", () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-run-')), 'run');
    const result = spawnSync('node', [cli, 'run', '--config', config, ...SETTINGS.flatMap((setting) => ['--set', setting]), '--out', out, '--quiet'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.task?.description).toContain('decoy rate 0.5, step slack 2');

    // The fixture's world, as the run made it: each task's budget is its exact expert's decisions plus 2.
    const world = createTaskWorld({ seed: 7, entities: 48, trainTasks: 24, testTasks: 12, levels: [1, 2], maxValue: 9, decoyRate: 0.5, stepSlack: 2 });
    const budget = (taskId: string) => world.task(taskId).maxSteps!;
    const budgets = world.split('train').map((task) => budget(task.id));
    expect(Math.max(...budgets)).toBeLessThanOrEqual(MAX_STEPS);
    expect(Math.min(...budgets)).toBeLessThan(MAX_STEPS);
    const collected = readJsonl<Trajectory>(join(out, 'trajectories.jsonl')).filter((trajectory) => trajectory.id.startsWith('collect-'));
    expect(collected).toHaveLength(24);
    for (const trajectory of collected) {
      expect(trajectory.steps.length, trajectory.id).toBeLessThanOrEqual(budget(trajectory.taskId!));
      if (trajectory.termination === 'max_steps') expect(trajectory.steps.length, trajectory.id).toBe(budget(trajectory.taskId!));
    }

    // One entry per labelled collected trajectory, split by outcome; a share wherever there is a trajectory of that outcome.
    const labelled = new Set(readJsonl<{ trajectoryId: string }>(join(out, 'labels.jsonl')).map((label) => label.trajectoryId));
    const stepOutcome = summary.stepOutcome!;
    expect(stepOutcome.labeller).toBe('monte-carlo');
    expect(stepOutcome.successful + stepOutcome.failed).toBe(labelled.size);
    expect(labelled.size).toBeGreaterThan(0);
    for (const [share, count] of [
      [stepOutcome.successfulWithBadStep, stepOutcome.successful],
      [stepOutcome.failedWithGoodStep, stepOutcome.failed],
    ] as const) {
      if (count === 0) expect(share).toBeNull();
      else {
        expect(share).toBeGreaterThanOrEqual(0);
        expect(share).toBeLessThanOrEqual(1);
      }
    }
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('Where the outcome misleads (collected trajectories)');
  }, 240_000);
});
