import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRunDirectory } from '@agentflow/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoopbackMlflowServer, startLoopbackMlflowServer } from './testing/loopback-mlflow-server';
import { readScalars } from './testing/read-event-files';
import { trackRunDirectory } from './track-run-directory';
import { trackingSettingsSchema } from './tracking-settings';

let server: LoopbackMlflowServer | undefined;
afterEach(async () => server?.close());

describe('trackRunDirectory', () => {
  it('sends every appended metrics row, the config, the summary and the report to both trackers, and a resume continues the MLflow run', async () => {
    server = await startLoopbackMlflowServer();
    const root = join(mkdtempSync(join(tmpdir(), 'agentflow-track-')), 'seed-3');
    const tracking = trackingSettingsSchema.parse({ tensorboard: {}, mlflow: { trackingUri: server.url, experiment: 'world' }, tags: { sweep: 'sweep-1' } });
    const config = { seed: 3, train: { credit: { kind: 'outcome' }, learningRate: 0.002 }, task: { levels: [1, 2] } };
    const warnings: string[] = [];
    const run = openRunDirectory(root);
    const first = trackRunDirectory(run, { tracking, config, tags: { seed: '3', credit: 'outcome' }, warn: (message) => warnings.push(message) });
    run.appendMetrics([{ stage: 'warm-start', step: 1, loss: 2.5, attempt: 0 }]);
    run.appendMetrics([{ stage: 'train', step: 1, reward: 0.25, note: 'words are not scalars' }, { stage: 'eval', step: 1, accuracy: 0.5 }]);
    await first.finish('failed');

    // The resumed process: the same MLflow run, a second TensorBoard event file.
    const resumed = openRunDirectory(root);
    const second = trackRunDirectory(resumed, { tracking, config, tags: { seed: '3', credit: 'outcome' }, warn: (message) => warnings.push(message) });
    resumed.appendMetrics([{ stage: 'train', step: 2, reward: 0.75 }]);
    writeFileSync(resumed.paths.summary, JSON.stringify({ credit: 'outcome', after: { accuracy: 0.625, ci95: [0.3, 0.8] } }));
    writeFileSync(resumed.paths.report, '<!doctype html><p>report</p>');
    await second.finish('finished');

    expect(warnings).toEqual([]);
    const expected = {
      'warm-start/loss': [[1, 2.5]],
      'warm-start/attempt': [[1, 0]],
      'train/reward': [[1, 0.25], [2, 0.75]],
      'eval/accuracy': [[1, 0.5]],
      'summary/after.accuracy': [[2, 0.625]],
      'summary/after.ci95.0': [[2, Math.fround(0.3)]],
      'summary/after.ci95.1': [[2, Math.fround(0.8)]],
    };
    expect(Object.fromEntries(readScalars(join(root, 'tensorboard', 'seed-3')))).toEqual(expected);
    const [mlflowRun, ...others] = [...server.runs.values()];
    expect(others).toEqual([]);
    expect(JSON.parse(readFileSync(join(root, 'tracking.json'), 'utf8'))).toEqual({ mlflow: { trackingUri: server.url, runId: mlflowRun?.runId, experimentId: mlflowRun?.experimentId } });
    const byKey: Record<string, Array<[number, number]>> = {};
    for (const metric of mlflowRun?.metrics ?? []) byKey[metric.key] = [...(byKey[metric.key] ?? []), [metric.step, metric.value]];
    expect(byKey).toEqual({ ...expected, 'summary/after.ci95.0': [[2, 0.3]], 'summary/after.ci95.1': [[2, 0.8]] });
    expect(mlflowRun).toMatchObject({ runName: 'seed-3', status: 'FINISHED', tags: { seed: '3', credit: 'outcome', sweep: 'sweep-1' } });
    expect(mlflowRun?.params).toEqual({ seed: '3', 'train.credit.kind': 'outcome', 'train.learningRate': '0.002', 'task.levels': '[1,2]' });
    expect(mlflowRun?.artifacts['report.html']?.toString()).toBe('<!doctype html><p>report</p>');
  });

  it('tracks nothing when the block is absent', async () => {
    const run = openRunDirectory(mkdtempSync(join(tmpdir(), 'agentflow-track-')));
    const tracking = trackRunDirectory(run, { tracking: undefined, config: {}, warn: () => {} });
    expect(tracking.trackers).toEqual([]);
    await tracking.finish('finished');
  });
});
