import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readConfigFile, validateConfig } from '../config/load-config';
import { AgentFlowError } from '../errors/agentflow-error';
import { appendJsonl, readJsonl } from '../jsonl/jsonl';
import { acquireRunDirectoryLock, type RunDirectoryLock } from '../run-directory/run-directory-lock';
import { openStageLedger, type StageLedger, type StageState, stageStateSchema } from './stage-ledger';

/** One row of a run's `metrics.jsonl`: the stage, a step counter and numbers (or words). */
export type MetricsRow = { stage: string; step: number } & Record<string, number | string>;

/** Told of the rows appended to a run's `metrics.jsonl` (see {@link RunDirectory.onMetrics}). */
export type MetricsListener = (rows: readonly MetricsRow[]) => void;

/**
 * A run directory. Everything a run writes goes here, append-only (JSONL) or replaced
 * atomically (state, summary), so a run killed at any moment can be resumed. The finished
 * stages are a {@link StageLedger} in `state.json`; the metrics are `metrics.jsonl`.
 */
export interface RunDirectory {
  /** The directory, absolute. */
  readonly root: string;
  readonly paths: {
    config: string;
    state: string;
    metrics: string;
    trajectories: string;
    summary: string;
    report: string;
    checkpoints: string;
  };
  /** The finished stages (`state.json`), as {@link runStages} reads and writes them. */
  readonly ledger: StageLedger;
  /** A path under `checkpoints/`, created on demand. */
  checkpoint(name: string): string;
  readState(): StageState;
  isStageDone(stage: string): boolean;
  stageResult<T>(stage: string): T | undefined;
  markStageDone(stage: string, result?: unknown): void;
  /** Appends rows to `metrics.jsonl` (one write, fsynced; see {@link appendJsonl}). */
  appendMetrics(rows: MetricsRow[]): void;
  /**
   * Calls `listener` with the rows of every later {@link RunDirectory.appendMetrics}, once they
   * are on disk: the one place a tracker (`@agentflow/tracking`) sees every metrics row. A
   * listener runs on the training path, so it must return at once and must not throw (an
   * exception reaches the caller of `appendMetrics`). Returns a function that removes it.
   */
  onMetrics(listener: MetricsListener): () => void;
  readMetrics(): MetricsRow[];
  /** The directory's writer lock, when opened with `lock` (see {@link acquireRunDirectoryLock}). */
  readonly lock: RunDirectoryLock | undefined;
  /** Releases the lock, if held (also done when the process exits). */
  close(): void;
}

export interface OpenRunDirectorySettings {
  /** Refuse a directory without `state.json` (NOT_FOUND), as a resume must. Default false: created as needed. */
  mustExist?: boolean;
  /** Said after NOT_FOUND's reason, e.g. how to start a run there. */
  startHint?: string;
  /**
   * Take the directory's writer lock before anything is written, naming what this process does
   * there (`agentflow run --resume`): a second writer is refused at once with RUN_LOCKED naming
   * the holder, and a lock whose process has ended is taken over. Default none (a reader).
   */
  lock?: { purpose: string };
}

/**
 * Opens (creating as needed) the run directory at `path`. A `state.json` that is not a stage
 * ledger is an INVALID_CONFIG naming the file and the key, as any config file's would be.
 */
export function openRunDirectory(path: string, settings: OpenRunDirectorySettings = {}): RunDirectory {
  const root = resolve(path);
  if (settings.mustExist && !existsSync(join(root, 'state.json'))) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${root} is not a run directory (no state.json).${settings.startHint ? ` ${settings.startHint}` : ''}`,
      details: { path: root },
    });
  }
  const lock = settings.lock ? acquireRunDirectoryLock(root, settings.lock) : undefined;
  try {
    return openLocked(root, lock);
  } catch (error) {
    lock?.release();
    throw error;
  }
}

function openLocked(root: string, lock: RunDirectoryLock | undefined): RunDirectory {
  mkdirSync(join(root, 'checkpoints'), { recursive: true });
  const paths = {
    config: join(root, 'config.json'),
    state: join(root, 'state.json'),
    metrics: join(root, 'metrics.jsonl'),
    trajectories: join(root, 'trajectories.jsonl'),
    summary: join(root, 'summary.json'),
    report: join(root, 'report.html'),
    checkpoints: join(root, 'checkpoints'),
  };
  const listeners = new Set<MetricsListener>();
  const ledger = openStageLedger(paths.state, { parse: (file) => validateConfig(readConfigFile(file), stageStateSchema, file) as StageState });
  return {
    root,
    paths,
    ledger,
    checkpoint(name) {
      const dir = join(paths.checkpoints, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    readState: ledger.read,
    isStageDone: ledger.isDone,
    stageResult: ledger.result,
    markStageDone: ledger.markDone,
    appendMetrics(rows) {
      appendJsonl(paths.metrics, rows);
      for (const listener of [...listeners]) listener(rows);
    },
    onMetrics(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    readMetrics: () => readJsonl<MetricsRow>(paths.metrics, { allowMissing: true }),
    lock,
    close: () => lock?.release(),
  };
}
