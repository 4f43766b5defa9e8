import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoopbackMlflowServer, startLoopbackMlflowServer } from '../testing/loopback-mlflow-server';
import type { Scalar } from '../tracker';
import { createMlflowTracker, proxiedArtifactPath } from './mlflow-tracker';

const servers: LoopbackMlflowServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
const start = async (mode: 'ok' | 'fail' | 'hang' = 'ok') => {
  const server = await startLoopbackMlflowServer(mode);
  servers.push(server);
  return server;
};
const scalars = (count: number): Scalar[] =>
  Array.from({ length: count }, (_, index) => ({ tag: index % 2 === 0 ? 'train/reward' : 'eval/accuracy', step: index, value: index / 10, wallTimeMs: 1_000 + index }));

describe('createMlflowTracker against a loopback MLflow server', () => {
  it('creates the experiment and the run, sends every param and metric within the batch limits, uploads the artifact, finishes the run', async () => {
    const server = await start();
    const report = join(mkdtempSync(join(tmpdir(), 'agentflow-mlflow-')), 'report.html');
    writeFileSync(report, '<!doctype html><title>run</title>');
    const warnings: string[] = [];
    const created: string[] = [];
    const tracker = createMlflowTracker({
      trackingUri: server.url,
      experiment: 'dapo-world',
      runName: 'outcome-seed3',
      tags: { seed: '3', credit: 'outcome' },
      warn: (message) => warnings.push(message),
      onRun: ({ runId }) => created.push(runId),
    });
    const params = Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`block.key${index}`, index % 3 === 0 ? `value ${index}` : index]));
    tracker.logParams(params);
    tracker.logScalars(scalars(1_200));
    tracker.logScalars(scalars(1_300).slice(1_200));
    tracker.logArtifact(report);
    await tracker.finish('finished');
    expect(warnings).toEqual([]);
    const [run, ...others] = [...server.runs.values()];
    expect(others).toEqual([]);
    expect(created).toEqual([run?.runId]);
    expect(server.experiments.get('dapo-world')).toBe(run?.experimentId);
    expect(run).toMatchObject({ runName: 'outcome-seed3', status: 'FINISHED', tags: { 'mlflow.runName': 'outcome-seed3', seed: '3', credit: 'outcome' } });
    expect(Object.keys(run?.params ?? {})).toHaveLength(150);
    expect(run?.params['block.key3']).toBe('value 3');
    expect(run?.params['block.key4']).toBe('4');
    expect(run?.metrics.map((metric) => [metric.key, metric.step, metric.value])).toEqual(scalars(1_300).map((scalar) => [scalar.tag, scalar.step, scalar.value]));
    // 1,450 entities in two calls: 100 params + 900 metrics (1,000 entities at most), then the rest.
    expect(server.largestBatch).toEqual({ metrics: 900, params: 100 });
    expect(server.requests.filter((request) => request.endsWith('/runs/log-batch'))).toHaveLength(2);
    expect(run?.artifacts['report.html']?.toString()).toBe('<!doctype html><title>run</title>');
  });

  it('a server that hangs: no call waits, finish costs one deadline, one warning, no request sent twice', async () => {
    const server = await start('hang');
    const warnings: string[] = [];
    const tracker = createMlflowTracker({ trackingUri: server.url, experiment: 'e', runName: 'r', timeoutMs: 300, warn: (message) => warnings.push(message) });
    const began = performance.now();
    for (let step = 0; step < 200; step++) tracker.logScalars(scalars(5).map((scalar) => ({ ...scalar, step })));
    tracker.logParams({ seed: 1 });
    expect(performance.now() - began).toBeLessThan(100);
    await tracker.finish('finished');
    const took = performance.now() - began;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1_500);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^MLflow \(http:\/\/127\.0\.0\.1:\d+\): GET http:\/\/127\.0\.0\.1:\d+\/api\/2\.0\/mlflow\/experiments\/get-by-name\?experiment_name=e did not answer within 300 ms\. Tracking to it stops; the run goes on/);
    expect(server.requests).toEqual(['GET /api/2.0/mlflow/experiments/get-by-name']);
  });

  it('a server that answers 500: retried, then one warning naming the status, and finish returns at once', async () => {
    const server = await start('fail');
    const warnings: string[] = [];
    const tracker = createMlflowTracker({ trackingUri: server.url, experiment: 'e', runName: 'r', retries: 2, sleep: async () => {}, warn: (message) => warnings.push(message) });
    tracker.logScalars(scalars(3));
    await new Promise((resolve) => setTimeout(resolve, 200));
    tracker.logScalars(scalars(3));
    const began = performance.now();
    await tracker.finish('finished');
    expect(performance.now() - began).toBeLessThan(50);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('answered 500 (INTERNAL_ERROR: the loopback server fails on purpose)');
    expect(server.requests).toHaveLength(3);
  });

  it('uploads only through the proxy: mlflow-artifacts URIs map to their path', () => {
    expect(proxiedArtifactPath('mlflow-artifacts:/4/abc/artifacts')).toBe('4/abc/artifacts');
    expect(proxiedArtifactPath('mlflow-artifacts://tracker:5000/4/abc/artifacts/')).toBe('4/abc/artifacts');
    expect(proxiedArtifactPath('s3://bucket/4/abc/artifacts')).toBeUndefined();
  });
});
