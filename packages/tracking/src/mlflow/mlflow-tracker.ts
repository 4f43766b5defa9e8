import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import type { ParamValue, Scalar, Tracker, TrackedRunStatus } from '../tracker';
import { type MlflowRestSettings, mlflowRequest } from './mlflow-rest';

export interface MlflowTrackerSettings {
  /** The tracking server, e.g. `http://127.0.0.1:5000`. */
  trackingUri: string;
  /** The experiment's name; created when the server has none of that name. */
  experiment: string;
  /** The run's name (`mlflow.runName`). */
  runName: string;
  /** Continue this MLflow run (a resumed AgentFlow run) instead of creating one. */
  runId?: string;
  /** Tags of the run, e.g. `{ seed: '3', credit: 'outcome' }`: a tracker's UI groups runs by them. */
  tags?: Readonly<Record<string, string>>;
  /** Deadline of one request, and the most {@link Tracker.finish} waits, in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** Further attempts of a request after a network error, 429 or 5xx. Default 2. */
  retries?: number;
  /** Scalars held while the server is slow; more are dropped (warned once). Default 100000. */
  maxQueuedScalars?: number;
  /** Sent with every request, e.g. `{ authorization: 'Bearer <token>' }`. */
  headers?: Readonly<Record<string, string>>;
  /** Told once, when the tracker gives up (or drops scalars); the run goes on. */
  warn: (message: string) => void;
  /** Told of the run once it exists, so a resumed run can continue it (`runId`). */
  onRun?: (run: { runId: string; experimentId: string }) => void;
  /** The transport (default the global `fetch`). */
  fetch?: typeof fetch;
  /** The clock in milliseconds (default `Date.now`). */
  now?: () => number;
  /** Waits between retries (default `setTimeout`). */
  sleep?: (ms: number) => Promise<void>;
}

/** MLflow's limits on one `runs/log-batch` call (mlflow/server/handlers.py, `_log_batch`). */
export const MLFLOW_BATCH_LIMITS = { metrics: 1000, params: 100, tags: 100, entities: 1000 } as const;
/** The longest param value MLflow 2.x stores (1.x stored 500 characters). */
const MAX_PARAM_VALUE = 6000;

interface RunInfo {
  runId: string;
  experimentId: string;
  artifactUri: string;
}
type KeyValue = { key: string; value: string };
type Metric = { key: string; value: number; timestamp: number; step: number };

/** Characters MLflow accepts in a metric or param name: letters, digits, `_ - . / ` and space; others become `_`. */
export const mlflowKey = (key: string) => key.replace(/[^\w\-. /]/g, '_').slice(0, 250);

/** The path under `/api/2.0/mlflow-artifacts/artifacts/` of a run's artifact root, when the server proxies its artifacts. */
export function proxiedArtifactPath(artifactUri: string): string | undefined {
  const match = /^mlflow-artifacts:(?:\/\/[^/]+)?\/+(.*)$/.exec(artifactUri);
  return match ? match[1]?.replace(/\/+$/, '') : undefined;
}

/**
 * A tracker that logs to an MLflow tracking server over its REST API (`experiments/get-by-name`,
 * `experiments/create`, `runs/create`, `runs/log-batch` within its limits, `runs/update`, and
 * artifacts through `/api/2.0/mlflow-artifacts/artifacts/...`). Calls queue their data and return
 * at once; one background worker sends it in batches. A request that fails after its retries (or
 * misses its deadline) makes the tracker warn once and drop everything after: the run goes on.
 */
export function createMlflowTracker(settings: MlflowTrackerSettings): Tracker {
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const maxQueued = settings.maxQueuedScalars ?? 100_000;
  const now = settings.now ?? Date.now;
  const stop = new AbortController();
  const rest: MlflowRestSettings = {
    trackingUri: settings.trackingUri,
    timeoutMs,
    retries: settings.retries ?? 2,
    signal: stop.signal,
    ...(settings.headers ? { headers: settings.headers } : {}),
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
    ...(settings.sleep ? { sleep: settings.sleep } : {}),
  };
  const name = `MLflow (${settings.trackingUri})`;
  const metrics: Metric[] = [];
  const params: KeyValue[] = [];
  const artifacts: string[] = [];
  let endStatus: TrackedRunStatus | undefined;
  let ended = false;
  let run: RunInfo | undefined;
  let worker: Promise<void> | undefined;
  let failed = false;
  let warned = false;

  const warnOnce = (message: string) => {
    if (warned) return;
    warned = true;
    settings.warn(message);
  };
  const fail = (error: unknown) => {
    failed = true;
    metrics.length = 0;
    params.length = 0;
    artifacts.length = 0;
    warnOnce(`${name}: ${(error as Error).message} Tracking to it stops; the run goes on and metrics.jsonl keeps every row.`);
  };

  async function experimentId(): Promise<string> {
    const query = `/api/2.0/mlflow/experiments/get-by-name?experiment_name=${encodeURIComponent(settings.experiment)}`;
    try {
      return (await mlflowRequest<{ experiment: { experiment_id: string } }>(rest, 'GET', query)).experiment.experiment_id;
    } catch (error) {
      if (!AgentFlowError.hasCode(error, 'HTTP_ERROR') || (error.details as { status?: number }).status !== 404) throw error;
    }
    try {
      return (await mlflowRequest<{ experiment_id: string }>(rest, 'POST', '/api/2.0/mlflow/experiments/create', { name: settings.experiment })).experiment_id;
    } catch (error) {
      // Another process created it between the two calls.
      if (!String((error as Error).message).includes('RESOURCE_ALREADY_EXISTS')) throw error;
      return (await mlflowRequest<{ experiment: { experiment_id: string } }>(rest, 'GET', query)).experiment.experiment_id;
    }
  }

  async function openRun(): Promise<RunInfo> {
    type Reply = { run: { info: { run_id: string; experiment_id: string; artifact_uri: string } } };
    const reply = settings.runId
      ? await mlflowRequest<Reply>(rest, 'GET', `/api/2.0/mlflow/runs/get?run_id=${encodeURIComponent(settings.runId)}`)
      : await mlflowRequest<Reply>(rest, 'POST', '/api/2.0/mlflow/runs/create', {
          experiment_id: await experimentId(),
          run_name: settings.runName,
          start_time: now(),
          tags: [{ key: 'mlflow.runName', value: settings.runName }, ...Object.entries(settings.tags ?? {}).map(([key, value]) => ({ key: mlflowKey(key), value }))],
        });
    const info = { runId: reply.run.info.run_id, experimentId: reply.run.info.experiment_id, artifactUri: reply.run.info.artifact_uri };
    if (settings.runId) await mlflowRequest(rest, 'POST', '/api/2.0/mlflow/runs/update', { run_id: info.runId, status: 'RUNNING' });
    settings.onRun?.({ runId: info.runId, experimentId: info.experimentId });
    return info;
  }

  async function uploadArtifact(info: RunInfo, path: string): Promise<void> {
    const root = proxiedArtifactPath(info.artifactUri);
    if (root === undefined) {
      settings.warn(`${name}: the run's artifacts live at ${info.artifactUri}, which this tracker cannot write (it uploads through the server's proxy, mlflow-artifacts:/); ${path} stays in the run directory only.`);
      return;
    }
    const target = `/api/2.0/mlflow-artifacts/artifacts/${root.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(basename(path))}`;
    await mlflowRequest(rest, 'PUT', target, new Uint8Array(readFileSync(path)), 'application/octet-stream');
  }

  /** The next `runs/log-batch` body: params first (they are few), then metrics, within MLflow's limits. */
  function nextBatch(info: RunInfo): { run_id: string; params: KeyValue[]; metrics: Metric[] } {
    const batchParams = params.splice(0, MLFLOW_BATCH_LIMITS.params);
    const batchMetrics = metrics.splice(0, Math.min(MLFLOW_BATCH_LIMITS.metrics, MLFLOW_BATCH_LIMITS.entities - batchParams.length));
    return { run_id: info.runId, params: batchParams, metrics: batchMetrics };
  }

  async function drain(): Promise<void> {
    run ??= await openRun();
    for (;;) {
      if (failed) return;
      if (params.length > 0 || metrics.length > 0) await mlflowRequest(rest, 'POST', '/api/2.0/mlflow/runs/log-batch', nextBatch(run));
      else if (artifacts.length > 0) await uploadArtifact(run, artifacts.shift() as string);
      else if (endStatus && !ended) {
        await mlflowRequest(rest, 'POST', '/api/2.0/mlflow/runs/update', { run_id: run.runId, status: endStatus === 'finished' ? 'FINISHED' : 'FAILED', end_time: now() });
        ended = true;
      } else return;
    }
  }

  function kick() {
    if (failed || worker) return;
    worker = drain()
      .catch(fail)
      .finally(() => {
        worker = undefined;
        if (!failed && (params.length > 0 || metrics.length > 0 || artifacts.length > 0 || (endStatus && !ended))) kick();
      });
  }

  async function idle(): Promise<void> {
    while (worker) await worker;
  }

  return {
    name,
    logParams(values: Readonly<Record<string, ParamValue>>) {
      if (failed) return;
      for (const [key, value] of Object.entries(values)) params.push({ key: mlflowKey(key), value: String(value).slice(0, MAX_PARAM_VALUE) });
      kick();
    },
    logScalars(scalars: readonly Scalar[]) {
      if (failed) return;
      const room = Math.max(0, maxQueued - metrics.length);
      if (scalars.length > room) warnOnce(`${name}: the server is behind by ${maxQueued} scalars; newer ones are dropped until it catches up (metrics.jsonl keeps every row).`);
      for (const scalar of scalars.slice(0, room)) {
        metrics.push({ key: mlflowKey(scalar.tag), value: scalar.value, timestamp: Math.round(scalar.wallTimeMs), step: Math.trunc(scalar.step) });
      }
      kick();
    },
    logArtifact(path: string) {
      if (failed) return;
      artifacts.push(path);
      kick();
    },
    async finish(status: TrackedRunStatus) {
      if (failed) return;
      endStatus = status;
      kick();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeoutMs);
      });
      const outcome = await Promise.race([idle().then(() => 'done' as const), late]);
      clearTimeout(timer);
      if (outcome === 'late') {
        stop.abort();
        fail(new AgentFlowError({ code: 'TIMEOUT', message: `finishing the run took more than ${timeoutMs} ms; what was not sent is left out.` }));
      }
      failed = true;
    },
  };
}
