/**
 * `prm.refreshAt` through the built CLI on the shortened embedded default: after DAPO step 1 the
 * policy of that step collects, labels and trains a new PRM, and step 2 is scored by it. The run
 * is killed (SIGKILL) inside the refresh and resumed: nothing is lost or done twice.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { loadPrm, type PrmExample, savePrm } from '@agentflow/prm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRefreshablePrm } from '../stages/prm-refresh';
import type { PipelineContext } from './pipeline-context';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');
const SETTINGS = ['prm.refreshAt=[1]', 'train.totalSteps=2', 'collect.maxTasks=12', 'label.maxTrajectories=8', 'train.evaluateEvery=0'].flatMap((setting) => ['--set', setting]);

describe('agentflow run with prm.refreshAt (shortened embedded default)', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it('makes a new PRM on the policy of step 1 and scores step 2 with it; a kill inside the refresh resumes without repeating work', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-refresh-')), 'run');
    const refresh = join(out, 'prm-refresh', 'step-1');
    const refreshed = join(out, 'checkpoints', 'prm-refresh-1');
    const child = spawn('node', [cli, 'run', '--config', config, ...SETTINGS, '--out', out, '--quiet'], { stdio: 'ignore' });
    // Killed once the refresh has collected something, before its PRM is saved.
    const killedInside = await new Promise<boolean>((resolve, reject) => {
      const timer = setInterval(() => {
        if (existsSync(join(refresh, 'trajectories.jsonl'))) {
          clearInterval(timer);
          const inside = !existsSync(join(refreshed, 'prm-config.json'));
          child.kill('SIGKILL');
          resolve(inside);
        }
      }, 20);
      child.on('exit', () => {
        clearInterval(timer);
        reject(new Error('the run ended before its PRM refresh began'));
      });
    });
    await new Promise((resolve) => child.once('exit', resolve));
    expect(killedInside).toBe(true);

    const resumed = spawnSync('node', [cli, 'run', '--resume', out, '--quiet'], { encoding: 'utf8', timeout: 240_000 });
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);

    // The refresh ran the collect stage's tasks (12 tasks, one rollout each) once each, and labelled each step once.
    const trajectories = readJsonl<Trajectory>(join(refresh, 'trajectories.jsonl'));
    expect(trajectories).toHaveLength(12);
    expect(new Set(trajectories.map((trajectory) => trajectory.id)).size).toBe(12);
    expect(trajectories.every((trajectory) => trajectory.id.startsWith('refresh-1-'))).toBe(true);
    const labels = readJsonl<PrmExample>(join(refresh, 'labels.jsonl'));
    expect(labels.length).toBeGreaterThan(0);
    expect(new Set(labels.map((label) => label.id)).size).toBe(labels.length);
    expect(new Set(labels.map((label) => label.trajectoryId)).size).toBeLessThanOrEqual(8);

    // Each DAPO step recorded once, the refresh once between them, its figures in the train stage's result.
    const metrics = readJsonl<{ stage: string; step: number; mse?: number; mseConstant?: number }>(join(out, 'metrics.jsonl'));
    expect(metrics.filter((row) => row.stage === 'train').map((row) => row.step)).toEqual([1, 2]);
    const refreshRows = metrics.filter((row) => row.stage === 'prm-refresh');
    expect(refreshRows).toHaveLength(1);
    expect(refreshRows[0]).toMatchObject({ step: 1 });
    expect(refreshRows[0]!.mse).toBeGreaterThanOrEqual(0);
    const state = JSON.parse(readFileSync(join(out, 'state.json'), 'utf8')) as { stages: { train: { result: { prmRefreshes: Array<{ step: number; trajectories: number; mse: number }> } } } };
    expect(state.stages.train.result.prmRefreshes).toMatchObject([{ step: 1, trajectories: 12, mse: refreshRows[0]!.mse }]);

    // What the DAPO stage scores with: the train-prm stage's PRM up to step 1, the refreshed one after it.
    const context = {
      config: { device: 'cpu', prm: { refreshAt: [1], scoringBatchSize: 16 }, train: { totalSteps: 2 } },
      run: { root: out, paths: { checkpoints: join(out, 'checkpoints') } },
    } as unknown as PipelineContext;
    const inputs = labels.filter((label) => label.action !== null).slice(0, 6);
    expect(inputs.length).toBeGreaterThan(0);
    const direct = async (dir: string) => {
      const prm = await loadPrm(dir, { device: 'cpu' });
      const scores = await prm.score(inputs);
      await prm.release();
      return scores;
    };
    // The tiny planner solves nothing here, so both PRMs learned "always about 0": to tell which
    // one scores, the refreshed head is zeroed, so that it scores 0.5 (sigmoid 0) for every step.
    const zeroed = await loadPrm(refreshed, { device: 'cpu' });
    zeroed.head.weight.fill(0);
    zeroed.head.bias.fill(0);
    await savePrm(zeroed, refreshed);
    await zeroed.release();
    const [original, renewed] = [await direct(join(out, 'checkpoints', 'prm')), await direct(refreshed)];
    expect(renewed).toEqual(inputs.map(() => 0.5));
    for (const score of original) expect(score).toBeLessThan(0.1);
    const scorer = createRefreshablePrm(context);
    const notCalled = async () => {
      throw new Error('the refresh is complete: use() must not make it again');
    };
    await scorer.use(0, notCalled);
    expect(await scorer.stepScorer.score(inputs)).toEqual(original);
    await scorer.use(1, notCalled);
    expect(await scorer.stepScorer.score(inputs)).toEqual(renewed);
    await scorer.release();
  }, 300_000);
});
