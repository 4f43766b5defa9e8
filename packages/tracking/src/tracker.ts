import { isPlainObject, type MetricsRow } from '@agentflow/core';

/** One number at one step: what every tracker stores. */
export interface Scalar {
  /** `<stage>/<key>` for a metrics row (`train/reward`, `eval/accuracy`), `summary/<path>` for the summary. */
  tag: string;
  step: number;
  value: number;
  /** When it was measured, in milliseconds since the epoch. */
  wallTimeMs: number;
}

/** A hyperparameter's value: what both TensorBoard's hparams and MLflow's params hold. */
export type ParamValue = string | number | boolean;

/** How a tracked run ended. */
export type TrackedRunStatus = 'finished' | 'failed';

/**
 * One experiment tracker. Every method returns at once and never throws: a tracker that
 * fails warns once (through its settings' `warn`) and ignores what follows, so training
 * neither stops nor waits for it. Only {@link Tracker.finish} is awaited, and it resolves
 * within the tracker's deadline.
 */
export interface Tracker {
  /** What the tracker is, for messages: `TensorBoard (runs/tb/run-1)`, `MLflow (http://...)`. */
  readonly name: string;
  /** The run's hyperparameters (a resolved config, flattened by {@link flattenParams}). */
  logParams(params: Readonly<Record<string, ParamValue>>): void;
  logScalars(scalars: readonly Scalar[]): void;
  /** A file kept with the run (MLflow's artifacts); a tracker without artifact storage ignores it. */
  logArtifact(path: string): void;
  /** Sends what is pending and marks the run ended; resolves within the tracker's deadline, never rejects. */
  finish(status: TrackedRunStatus): Promise<void>;
}

/** The scalars of one `metrics.jsonl` row: each finite number but `step`, tagged `<stage>/<key>`, at the row's step. */
export function metricsRowScalars(row: MetricsRow, wallTimeMs: number): Scalar[] {
  return Object.entries(row).flatMap(([key, value]) =>
    key !== 'step' && key !== 'stage' && typeof value === 'number' && Number.isFinite(value)
      ? [{ tag: `${row.stage}/${key}`, step: row.step, value, wallTimeMs }]
      : [],
  );
}

/**
 * A nested value (a resolved config, a summary) as dotted keys: `{ train: { credit: { kind: 'mix' } } }`
 * is `{ 'train.credit.kind': 'mix' }`. Lists and null become their JSON text (with `indexLists`,
 * each item its own key: `ci95.0`, `ci95.1`); undefined is left out.
 */
export function flattenParams(value: unknown, settings: { prefix?: string; indexLists?: boolean } = {}): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  const visit = (entry: unknown, path: string) => {
    if (entry === undefined) return;
    if (typeof entry === 'string' || typeof entry === 'boolean' || (typeof entry === 'number' && Number.isFinite(entry))) out[path] = entry;
    else if (isPlainObject(entry) && Object.keys(entry).length > 0) {
      for (const [key, inner] of Object.entries(entry)) visit(inner, path === '' ? key : `${path}.${key}`);
    } else if (settings.indexLists && Array.isArray(entry) && entry.length > 0) {
      for (const [index, item] of entry.entries()) visit(item, `${path}.${index}`);
    } else if (path !== '') out[path] = JSON.stringify(entry) ?? String(entry);
  };
  if (isPlainObject(value)) visit(value, settings.prefix ?? '');
  return out;
}

/** The numbers of a nested value (a run's `summary.json`) as `summary/<dotted path>` scalars at `step`, list items indexed. */
export function summaryScalars(summary: unknown, step: number, wallTimeMs: number): Scalar[] {
  return Object.entries(flattenParams(summary, { indexLists: true })).flatMap(([path, value]) =>
    typeof value === 'number' ? [{ tag: `summary/${path}`, step, value, wallTimeMs }] : [],
  );
}
