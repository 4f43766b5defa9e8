import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MetricsRow, readJsonl } from '@agentflow/core';
import { type LoopbackMlflowServer, readScalars, startLoopbackMlflowServer } from '@agentflow/tracking/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');

/** `agentflow run` of the short fixture, asynchronously: the loopback MLflow server answers from this process meanwhile. */
function shortRun(out: string, tracking: string): Promise<{ status: number | null; stderr: string; exitedAt: number }> {
  // Shorter than short-run.yaml's own budget (the suite runs it twice): every stage still writes metrics rows.
  const shorter = ['warmStart.epochs=2', 'label.maxTrajectories=4', 'prm.epochs=4', 'collect.maxTasks=12'].flatMap((value) => ['--set', value]);
  const child = spawn('node', [cli, 'run', '--config', config, '--out', out, '--quiet', ...shorter, '--set', `tracking=${tracking}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, stderr, exitedAt: Date.now() })));
}

const summaryOf = (dir: string) => {
  const { durationSeconds: _, ...summary } = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  return summary;
};

describe('agentflow run with TensorBoard and MLflow tracking', () => {
  const servers: LoopbackMlflowServer[] = [];
  let root = '';
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
    root = mkdtempSync(join(tmpdir(), 'agentflow-tracking-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('gives both trackers every scalar of metrics.jsonl at its step, the config, the summary and the report; a hanging server costs one deadline and changes nothing', async () => {
    const [ok, hang] = await Promise.all([startLoopbackMlflowServer('ok'), startLoopbackMlflowServer('hang')]);
    servers.push(ok, hang);
    const out = join(root, 'tracked');
    const result = await shortRun(out, `{tensorboard: {dir: ${join(root, 'tb')}}, mlflow: {trackingUri: '${ok.url}', experiment: short-run}}`);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);

    const rows = readJsonl<MetricsRow>(join(out, 'metrics.jsonl'));
    const expected = new Map<string, Array<[number, number]>>();
    for (const row of rows) {
      for (const [key, value] of Object.entries(row)) {
        if (key !== 'step' && typeof value === 'number') expected.set(`${row.stage}/${key}`, [...(expected.get(`${row.stage}/${key}`) ?? []), [row.step, value]]);
      }
    }
    expect(expected.get('train/reward')).toHaveLength(2);
    expect(expected.get('warm-start/loss')).toHaveLength(2);
    // TensorBoard: read back by the independent reader (CRCs checked), as 32-bit floats.
    const events = readScalars(join(root, 'tb', 'tracked'));
    for (const [tag, points] of expected) expect(events.get(tag), tag).toEqual(points.map(([step, value]) => [step, Math.fround(value)]));
    const summary = summaryOf(out);
    expect(events.get('summary/after.accuracy')).toEqual([[2, Math.fround(summary.after.accuracy)]]);

    // MLflow: one run with the config's params, every metric, the summary, report.html, finished.
    const [run, ...others] = [...ok.runs.values()];
    expect(others).toEqual([]);
    expect(run).toMatchObject({ runName: 'tracked', status: 'FINISHED', tags: { seed: '1', credit: 'process-sum' } });
    expect(run?.params).toMatchObject({ name: 'short-run', seed: '1', 'train.credit.kind': 'process-sum', 'train.totalSteps': '2', 'task.levels': '[1,2]' });
    const logged = new Map<string, Array<[number, number]>>();
    for (const metric of run?.metrics ?? []) logged.set(metric.key, [...(logged.get(metric.key) ?? []), [metric.step, metric.value]]);
    for (const [tag, points] of expected) expect(logged.get(tag), tag).toEqual(points);
    expect(logged.get('summary/before.accuracy')).toEqual([[2, summary.before.accuracy]]);
    expect(run?.artifacts['report.html']?.toString()).toBe(readFileSync(join(out, 'report.html'), 'utf8'));

    // The same run against a server that never answers: one warning, the same summary, one deadline (1 s) at most.
    const stalled = join(root, 'stalled');
    const slow = await shortRun(stalled, `{mlflow: {trackingUri: '${hang.url}', timeoutMs: 1000}}`);
    expect(slow.status).toBe(0);
    expect(slow.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^warning: MLflow \(http:\/\/127\.0\.0\.1:\d+\): GET .*get-by-name\?experiment_name=agentflow did not answer within 1000 ms\. Tracking to it stops; the run goes on/)]);
    expect(hang.requests).toEqual(['GET /api/2.0/mlflow/experiments/get-by-name']);
    expect(summaryOf(stalled)).toEqual(summary);
    // The server hung from the first request on: its one deadline passed during training, so the
    // end of the run (report.html written to the process's exit) takes no longer than the tracked run's.
    const tail = (dir: string, exitedAt: number) => exitedAt - statSync(join(dir, 'report.html')).mtimeMs;
    expect(tail(stalled, slow.exitedAt)).toBeLessThan(tail(out, result.exitedAt) + 1000 + 1000);
  }, 240_000);
});
