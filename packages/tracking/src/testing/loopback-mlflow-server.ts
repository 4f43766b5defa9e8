import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the loopback MLflow server holds of one run. */
export interface LoopbackMlflowRun {
  runId: string;
  experimentId: string;
  runName: string;
  status: string;
  endTime?: number;
  tags: Record<string, string>;
  params: Record<string, string>;
  /** Every metric logged, in order. */
  metrics: Array<{ key: string; value: number; timestamp: number; step: number }>;
  /** Artifacts by path under the run's artifact root. */
  artifacts: Record<string, Buffer>;
}

/** How the server answers: as MLflow does, with 500 to everything, or never. */
export type LoopbackMlflowMode = 'ok' | 'fail' | 'hang';

export interface LoopbackMlflowServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  experiments: Map<string, string>;
  runs: Map<string, LoopbackMlflowRun>;
  /** Every request received: method and path. */
  requests: string[];
  /** The biggest `runs/log-batch` seen: metrics and params of one call. */
  largestBatch: { metrics: number; params: number };
  close(): Promise<void>;
}

/**
 * An MLflow tracking server on loopback for tests, speaking the REST API the tracker uses:
 * experiments get-by-name/create, runs create/get/update/log-batch (refusing a batch over
 * MLflow's limits with 400 INVALID_PARAMETER_VALUE, and a changed param as MLflow does), and
 * proxied artifact uploads (PUT /api/2.0/mlflow-artifacts/artifacts/...). `fail` answers 500
 * to everything; `hang` never answers.
 */
export async function startLoopbackMlflowServer(mode: LoopbackMlflowMode = 'ok'): Promise<LoopbackMlflowServer> {
  const experiments = new Map<string, string>();
  const runs = new Map<string, LoopbackMlflowRun>();
  const requests: string[] = [];
  const largestBatch = { metrics: 0, params: 0 };
  const hanging: ServerResponse[] = [];
  let nextId = 1;

  const reply = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const error = (response: ServerResponse, status: number, code: string, message: string) => reply(response, status, { error_code: code, message });
  const runInfo = (run: LoopbackMlflowRun) => ({
    run_id: run.runId,
    experiment_id: run.experimentId,
    run_name: run.runName,
    status: run.status,
    artifact_uri: `mlflow-artifacts:/${run.experimentId}/${run.runId}/artifacts`,
  });

  const handle = (request: IncomingMessage, body: Buffer, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://loopback');
    requests.push(`${request.method} ${url.pathname}`);
    if (mode === 'hang') {
      hanging.push(response);
      return;
    }
    if (mode === 'fail') return error(response, 500, 'INTERNAL_ERROR', 'the loopback server fails on purpose');
    const json = () => JSON.parse(body.toString('utf8') || '{}');
    const path = url.pathname;
    if (request.method === 'PUT' && path.startsWith('/api/2.0/mlflow-artifacts/artifacts/')) {
      const [experimentId, runId, , ...rest] = path.slice('/api/2.0/mlflow-artifacts/artifacts/'.length).split('/').map(decodeURIComponent);
      const run = runs.get(runId ?? '');
      if (!run || run.experimentId !== experimentId) return error(response, 404, 'RESOURCE_DOES_NOT_EXIST', `no run ${runId}`);
      run.artifacts[rest.join('/')] = body;
      return reply(response, 200, {});
    }
    if (request.method === 'GET' && path === '/api/2.0/mlflow/experiments/get-by-name') {
      const id = experiments.get(url.searchParams.get('experiment_name') ?? '');
      return id === undefined ? error(response, 404, 'RESOURCE_DOES_NOT_EXIST', 'no such experiment') : reply(response, 200, { experiment: { experiment_id: id } });
    }
    if (request.method === 'POST' && path === '/api/2.0/mlflow/experiments/create') {
      const { name } = json();
      if (experiments.has(name)) return error(response, 400, 'RESOURCE_ALREADY_EXISTS', `experiment ${name} exists`);
      experiments.set(name, String(nextId++));
      return reply(response, 200, { experiment_id: experiments.get(name) });
    }
    if (request.method === 'POST' && path === '/api/2.0/mlflow/runs/create') {
      const { experiment_id, run_name, tags } = json();
      const run: LoopbackMlflowRun = { runId: `run${nextId++}`, experimentId: experiment_id, runName: run_name, status: 'RUNNING', tags: {}, params: {}, metrics: [], artifacts: {} };
      for (const tag of tags ?? []) run.tags[tag.key] = tag.value;
      runs.set(run.runId, run);
      return reply(response, 200, { run: { info: runInfo(run) } });
    }
    const run = runs.get((request.method === 'GET' ? url.searchParams.get('run_id') : json().run_id) ?? '');
    if (!run) return error(response, 404, 'RESOURCE_DOES_NOT_EXIST', 'no such run');
    if (request.method === 'GET' && path === '/api/2.0/mlflow/runs/get') return reply(response, 200, { run: { info: runInfo(run) } });
    if (request.method === 'POST' && path === '/api/2.0/mlflow/runs/update') {
      const { status, end_time } = json();
      run.status = status ?? run.status;
      if (end_time !== undefined) run.endTime = end_time;
      return reply(response, 200, { run_info: runInfo(run) });
    }
    if (request.method === 'POST' && path === '/api/2.0/mlflow/runs/log-batch') {
      const { metrics = [], params = [], tags = [] } = json();
      largestBatch.metrics = Math.max(largestBatch.metrics, metrics.length);
      largestBatch.params = Math.max(largestBatch.params, params.length);
      if (metrics.length > 1000 || params.length > 100 || metrics.length + params.length + tags.length > 1000) {
        return error(response, 400, 'INVALID_PARAMETER_VALUE', 'A batch logging request can contain at most 1000 metrics, 100 params and 1000 entities in total');
      }
      for (const param of params) {
        if (param.key in run.params && run.params[param.key] !== param.value) return error(response, 400, 'INVALID_PARAMETER_VALUE', `Changing param values is not allowed: ${param.key}`);
        run.params[param.key] = param.value;
      }
      for (const tag of tags) run.tags[tag.key] = tag.value;
      for (const metric of metrics) {
        if (typeof metric.value !== 'number' || !Number.isInteger(metric.step) || !Number.isInteger(metric.timestamp)) return error(response, 400, 'INVALID_PARAMETER_VALUE', `bad metric ${JSON.stringify(metric)}`);
        run.metrics.push(metric);
      }
      return reply(response, 200, {});
    }
    return error(response, 404, 'ENDPOINT_NOT_FOUND', `${request.method} ${path}`);
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, Buffer.concat(chunks), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    experiments,
    runs,
    requests,
    largestBatch,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
