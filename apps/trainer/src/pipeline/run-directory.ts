import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, appendJsonl, openStageLedger, readConfigFile, readJsonl, type StageLedger, type StageState, stageStateSchema, validateConfig } from '@agentflow/core';
import type { MetricsRow } from '../report/run-summary';

/**
 * A run directory. Everything a run writes goes here, append-only (JSONL) or replaced
 * atomically (state, summary), so a run killed at any moment can be resumed. The finished
 * stages are core's stage ledger in `state.json`.
 */
export interface RunDirectory {
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
  /** The finished stages (`state.json`), as core's runStages reads and writes them. */
  readonly ledger: StageLedger;
  /** A path under `checkpoints/`, created on demand. */
  checkpoint(name: string): string;
  readState(): StageState;
  isStageDone(stage: string): boolean;
  stageResult<T>(stage: string): T | undefined;
  markStageDone(stage: string, result?: unknown): void;
  appendMetrics(rows: MetricsRow[]): void;
  readMetrics(): MetricsRow[];
}

export function openRunDirectory(path: string, { mustExist = false } = {}): RunDirectory {
  const root = resolve(path);
  if (mustExist && !existsSync(join(root, 'state.json'))) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${root} is not a run directory (no state.json). Start a run with \`agentflow run --out ${path}\`.`,
      details: { path: root },
    });
  }
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
  // Read as any config file: a corrupt state.json is an INVALID_CONFIG naming the file and the key.
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
    appendMetrics: (rows) => appendJsonl(paths.metrics, rows),
    readMetrics: () => readJsonl<MetricsRow>(paths.metrics, { allowMissing: true }),
  };
}
