import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MetricsRow, type StageState, writeFileAtomic } from '@agentflow/core';
import type { RunConfig } from '../config/schema';

/**
 * The stages the credit cannot change, and what they leave in a run directory: the warm start
 * (the planner, its checkpoint and progress) and the evaluation before DAPO (its result is in
 * `state.json`). A sweep over credits runs them once per seed.
 */
const SHARED_STAGES = ['warm-start', 'eval-before'] as const;
const SHARED_PATHS = ['models/policy', 'checkpoints/policy-warm', 'checkpoints/warm-start.json', 'leakage.json'];

/** The config as the shared stages see it: everything but the credit, the name and the directory. */
function withoutCredit(config: RunConfig): string {
  const { out: _out, name: _name, train, ...rest } = config;
  const { credit: _credit, ...dapo } = train;
  return JSON.stringify({ ...rest, train: dapo });
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/**
 * Starts the run `config` in the new directory `dir` from the shared stages of `source`, a run
 * of the same seed whose config differs only in `train.credit`: copies what they wrote, records
 * them as finished (with their results and metrics rows), so that resuming `dir` goes on from
 * the collect stage, exactly as a fresh run would (every later stage draws from its own fork of
 * the seed). Returns false, writing nothing, when `source` has not finished them or differs in
 * more than the credit.
 */
export function startFromSharedStages(source: string, dir: string, config: RunConfig): boolean {
  const statePath = join(source, 'state.json');
  const configPath = join(source, 'config.json');
  if (!existsSync(statePath) || !existsSync(configPath) || existsSync(join(dir, 'state.json'))) return false;
  const state = readJson<StageState>(statePath);
  if (!SHARED_STAGES.every((stage) => stage in state.stages)) return false;
  if (withoutCredit(readJson<RunConfig>(configPath)) !== withoutCredit(config)) return false;
  mkdirSync(dir, { recursive: true });
  for (const path of SHARED_PATHS) {
    if (existsSync(join(source, path))) cpSync(join(source, path), join(dir, path), { recursive: true });
  }
  const metricsPath = join(source, 'metrics.jsonl');
  const rows = existsSync(metricsPath)
    ? readFileSync(metricsPath, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && (SHARED_STAGES as readonly string[]).includes((JSON.parse(line) as MetricsRow).stage))
    : [];
  if (rows.length > 0) writeFileAtomic(join(dir, 'metrics.jsonl'), `${rows.join('\n')}\n`);
  const stages = Object.fromEntries(SHARED_STAGES.map((stage) => [stage, state.stages[stage] as StageState['stages'][string]]));
  // The run's own clock starts now: its wall time counts the stages it runs, not the shared ones.
  const fresh: StageState = { version: 1, createdAt: new Date().toISOString(), stages };
  writeFileAtomic(join(dir, 'state.json'), `${JSON.stringify(fresh, null, 2)}\n`);
  writeFileAtomic(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  return true;
}
