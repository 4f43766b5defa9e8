import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, appendJsonl, readJsonl, writeFileAtomic } from '@agentflow/core';
import { z } from 'zod';
import { readConfigFile, validateConfig } from '../config/load-config';
import type { MetricsRow } from '../report/run-summary';

/** What `state.json` records: the stages that finished, and what each produced. */
export interface RunState {
  version: 1;
  createdAt: string;
  stages: Record<string, { finishedAt: string; result?: unknown }>;
}

/** What a state.json must hold; a stage's result is its own business. */
const runStateSchema = z
  .object({
    version: z.literal(1).describe('Layout version of state.json.'),
    createdAt: z.string().describe('When the run started (ISO 8601).'),
    stages: z
      .record(
        z.string(),
        z.object({ finishedAt: z.string().describe('When the stage finished (ISO 8601).'), result: z.unknown().optional() }).passthrough(),
      )
      .describe('The stages that finished, by name.'),
  })
  .passthrough();

/**
 * A run directory. Everything a run writes goes here, append-only (JSONL) or replaced
 * atomically (state, summary), so a run killed at any moment can be resumed.
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
  /** A path under `checkpoints/`, created on demand. */
  checkpoint(name: string): string;
  readState(): RunState;
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
  // Read whole and validated each time: a corrupt state.json is an INVALID_CONFIG naming the file and the key.
  const readState = (): RunState => {
    if (!existsSync(paths.state)) return { version: 1, createdAt: new Date().toISOString(), stages: {} };
    return validateConfig(readConfigFile(paths.state), runStateSchema, paths.state) as RunState;
  };
  if (existsSync(paths.state)) readState();
  else writeFileAtomic(paths.state, JSON.stringify(readState(), null, 2));
  return {
    root,
    paths,
    checkpoint(name) {
      const dir = join(paths.checkpoints, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    readState,
    isStageDone: (stage) => stage in readState().stages,
    stageResult: <T>(stage: string) => readState().stages[stage]?.result as T | undefined,
    markStageDone(stage, result) {
      const state = readState();
      state.stages[stage] = { finishedAt: new Date().toISOString(), ...(result === undefined ? {} : { result }) };
      writeFileAtomic(paths.state, JSON.stringify(state, null, 2));
    },
    appendMetrics: (rows) => appendJsonl(paths.metrics, rows),
    readMetrics: () => readJsonl<MetricsRow>(paths.metrics, { allowMissing: true }),
  };
}
