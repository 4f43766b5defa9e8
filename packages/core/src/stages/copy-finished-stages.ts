import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../jsonl/write-file-atomic';
import type { MetricsRow } from './run-directory';
import type { StageState } from './stage-ledger';

/** What {@link copyFinishedStages} copies. */
export interface CopyFinishedStagesSettings {
  /** Stages that must have finished in the source run; their ledger entries and metrics rows are copied. */
  stages: readonly string[];
  /** Files and folders those stages wrote, relative to the run directory (missing ones are skipped). */
  paths: readonly string[];
  /** The new run's `config.json` content (a JSON value). */
  config: unknown;
}

/**
 * Starts a new run directory `target` from stages another run (`source`) already finished: copies
 * what they wrote, their entries in `state.json` (with their results) and their rows of
 * `metrics.jsonl`, and writes the new run's config, so that resuming `target` skips them. Its
 * own clock (`createdAt`) starts now. Returns false, writing nothing, when `source` has not
 * finished every stage or `target` already holds a run. Whether the stages would have come out
 * the same under the new config is the caller's to decide.
 */
export function copyFinishedStages(source: string, target: string, settings: CopyFinishedStagesSettings): boolean {
  const statePath = join(source, 'state.json');
  if (!existsSync(statePath) || existsSync(join(target, 'state.json'))) return false;
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as StageState;
  const entries = settings.stages.map((stage) => [stage, state.stages[stage]] as const);
  if (entries.some(([, entry]) => entry === undefined)) return false;
  mkdirSync(target, { recursive: true });
  for (const path of settings.paths) {
    if (existsSync(join(source, path))) cpSync(join(source, path), join(target, path), { recursive: true });
  }
  const metricsPath = join(source, 'metrics.jsonl');
  const rows = existsSync(metricsPath)
    ? readFileSync(metricsPath, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && settings.stages.includes((JSON.parse(line) as MetricsRow).stage))
    : [];
  if (rows.length > 0) writeFileAtomic(join(target, 'metrics.jsonl'), `${rows.join('\n')}\n`);
  const fresh: StageState = { version: 1, createdAt: new Date().toISOString(), stages: Object.fromEntries(entries) as StageState['stages'] };
  writeFileAtomic(join(target, 'state.json'), `${JSON.stringify(fresh, null, 2)}\n`);
  writeFileAtomic(join(target, 'config.json'), `${JSON.stringify(settings.config, null, 2)}\n`);
  return true;
}
