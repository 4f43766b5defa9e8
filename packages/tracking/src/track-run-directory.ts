import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { type RunDirectory, writeFileAtomic } from '@agentflow/core';
import { createMlflowTracker } from './mlflow/mlflow-tracker';
import { createTensorBoardTracker } from './tensorboard/tensorboard-tracker';
import { flattenParams, metricsRowScalars, summaryScalars, type Tracker, type TrackedRunStatus } from './tracker';
import type { TrackingSettings } from './tracking-settings';

export interface TrackRunDirectorySettings {
  /** The config's `tracking` block (parsed by {@link trackingSettingsSchema}); undefined tracks nothing. */
  tracking: TrackingSettings | undefined;
  /** The run's resolved config: its leaves become params (MLflow) and hparams (TensorBoard). */
  config: unknown;
  /** Tags beside the block's own `tags`, e.g. `{ seed: '3', credit: 'outcome' }`. */
  tags?: Readonly<Record<string, string>>;
  /** Told once per tracker that fails; the run goes on. */
  warn: (message: string) => void;
  /** The run's name in the trackers (default the run directory's name). */
  runName?: string;
  /** Environment for `tracking.mlflow.tokenEnv` (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
  now?: () => number;
}

/** What a run directory's trackers need at the end. */
export interface RunTracking {
  /** The trackers attached (none when tracking is off). */
  readonly trackers: readonly Tracker[];
  /**
   * Logs `summary.json` (its numbers, at the step of the last metrics row) and `report.html` (an artifact)
   * when the run wrote them, marks the run ended and stops listening. Resolves within the
   * slowest tracker's deadline; never rejects.
   */
  finish(status: TrackedRunStatus): Promise<void>;
  /** Runs `work`, then {@link RunTracking.finish} with `finished`, or `failed` when it throws (rethrown). */
  around<T>(work: () => Promise<T>): Promise<T>;
}

/** `tracking.json` in a run directory: the MLflow run a resumed run continues. */
const TRACKING_FILE = 'tracking.json';

function recordedMlflowRun(root: string, trackingUri: string): string | undefined {
  const path = join(root, TRACKING_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const recorded = JSON.parse(readFileSync(path, 'utf8')) as { mlflow?: { runId?: string; trackingUri?: string } };
    return recorded.mlflow?.trackingUri === trackingUri ? recorded.mlflow.runId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Attaches the trackers a config asks for to a run directory: every row appended to its
 * `metrics.jsonl` from now on goes to each tracker as scalars at its step (through
 * {@link RunDirectory.onMetrics}), and the config as params. A resumed run (its MLflow run in
 * `tracking.json`) continues the same MLflow run; TensorBoard adds an event file beside the
 * earlier ones. Nothing here waits on a tracker until {@link RunTracking.finish}.
 */
export function trackRunDirectory(run: RunDirectory, settings: TrackRunDirectorySettings): RunTracking {
  const { tracking } = settings;
  const now = settings.now ?? Date.now;
  const runName = settings.runName ?? basename(run.root);
  const tags = { ...settings.tags, ...tracking?.tags };
  const trackers: Tracker[] = [];
  if (tracking?.tensorboard) {
    const logdir = resolve(tracking.tensorboard.dir ?? join(run.root, 'tensorboard'));
    trackers.push(createTensorBoardTracker({ dir: join(logdir, runName), warn: settings.warn, now }));
  }
  if (tracking?.mlflow) {
    const { trackingUri, experiment, timeoutMs, retries, tokenEnv } = tracking.mlflow;
    const token = (settings.env ?? process.env)[tokenEnv];
    const runId = recordedMlflowRun(run.root, trackingUri);
    trackers.push(
      createMlflowTracker({
        trackingUri,
        experiment,
        runName,
        tags,
        timeoutMs,
        retries,
        warn: settings.warn,
        now,
        ...(runId ? { runId } : {}),
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
        ...(settings.fetch ? { fetch: settings.fetch } : {}),
        onRun: (created) => {
          try {
            writeFileAtomic(join(run.root, TRACKING_FILE), `${JSON.stringify({ mlflow: { trackingUri, ...created } }, null, 2)}\n`);
          } catch (error) {
            settings.warn(`could not record the MLflow run in ${join(run.root, TRACKING_FILE)} (${(error as Error).message}); a resume will start a new MLflow run.`);
          }
        },
      }),
    );
  }
  if (trackers.length === 0) return { trackers, finish: async () => {}, around: (work) => work() };

  const params = flattenParams(settings.config);
  for (const tracker of trackers) tracker.logParams(params);
  let lastStep = run.readMetrics().at(-1)?.step ?? 0;
  const stopListening = run.onMetrics((rows) => {
    const wallTimeMs = now();
    const scalars = rows.flatMap((row) => metricsRowScalars(row, wallTimeMs));
    lastStep = rows.at(-1)?.step ?? lastStep;
    for (const tracker of trackers) tracker.logScalars(scalars);
  });

  const attached: RunTracking = {
    trackers,
    async around(work) {
      let status: TrackedRunStatus = 'failed';
      try {
        const result = await work();
        status = 'finished';
        return result;
      } finally {
        await attached.finish(status);
      }
    },
    async finish(status) {
      stopListening();
      if (existsSync(run.paths.summary)) {
        try {
          const scalars = summaryScalars(JSON.parse(readFileSync(run.paths.summary, 'utf8')), lastStep, now());
          for (const tracker of trackers) tracker.logScalars(scalars);
        } catch (error) {
          settings.warn(`${run.paths.summary} is not JSON (${(error as Error).message}); the trackers get no summary.`);
        }
      }
      if (existsSync(run.paths.report)) for (const tracker of trackers) tracker.logArtifact(run.paths.report);
      await Promise.all(trackers.map((tracker) => tracker.finish(status)));
    },
  };
  return attached;
}
