import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, describeValue, readJsonl, type Trajectory, trajectorySchema, writeFileAtomic } from '@agentflow/core';
import { type EvalRecord, evalRecordSchema } from './eval-record';
import { firstDifference } from './first-difference';
import { optionOfSettingsKey } from './eval-options';
import { type EvalConfigFile, type EvalConnection, type EvalSettings, evalConfigFileSchema } from './eval-settings';

/** The files of an eval directory. */
export interface EvalDirectory {
  root: string;
  /** The settings (compared on resume) and the connection: atomic writes. */
  config: string;
  /** One record per finished run, append-only. */
  records: string;
  /** One trajectory per finished run, append-only, written before its record. */
  trajectories: string;
  /** The metrics over the records so far: atomic writes. */
  summary: string;
}

export function evalDirectoryOf(root: string): EvalDirectory {
  const absolute = resolve(root);
  return {
    root: absolute,
    config: join(absolute, 'eval-config.json'),
    records: join(absolute, 'eval.jsonl'),
    trajectories: join(absolute, 'trajectories.jsonl'),
    summary: join(absolute, 'eval.json'),
  };
}

/** True when `root` holds an eval (its eval-config.json), as opposed to a run directory. */
export function isEvalDirectory(root: string): boolean {
  return existsSync(evalDirectoryOf(root).config);
}

/** The recorded config of an eval directory. */
export function readEvalConfig(directory: EvalDirectory): EvalConfigFile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(directory.config, 'utf8'));
  } catch (cause) {
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `${directory.config} is not readable JSON (${(cause as Error).message}); it records the eval's settings.`,
      cause,
      details: { path: directory.config },
    });
  }
  const parsed = evalConfigFileSchema.safeParse(value);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `${directory.config} is not an eval config: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
      details: { path: directory.config },
    });
  }
  return parsed.data;
}

/**
 * Starts an eval in `root`, or continues the one there. A new eval needs an empty or absent
 * folder (never a run directory); a continued one must have the same settings in every key,
 * else INVALID_ARGUMENT names the first key that differs. The connection is rewritten.
 */
export function openEvalDirectory(
  root: string,
  settings: EvalSettings,
  connection: EvalConnection,
  now: () => Date = () => new Date(),
): { directory: EvalDirectory; resumed: boolean } {
  const directory = evalDirectoryOf(root);
  if (existsSync(directory.config)) {
    const recorded = readEvalConfig(directory);
    const difference = firstDifference(recorded.settings, settings);
    if (difference) {
      const option = optionOfSettingsKey(difference.key);
      const changed =
        difference.key === 'data.sha256'
          ? `the data file ${settings.data.path} changed since the eval started (${difference.key} differs)`
          : `it was started with ${difference.key} = ${describeValue(difference.recorded)}${option ? ` (${option})` : ''}; this command gives ${describeValue(difference.given)}`;
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${directory.root} holds an eval with other settings: ${changed}. Continue it with its recorded settings (\`agentflow eval --resume ${directory.root}\`, see eval-config.json), or choose another --out.`,
        details: { key: difference.key, recorded: difference.recorded, given: difference.given },
      });
    }
    writeFileAtomic(directory.config, `${JSON.stringify({ ...recorded, connection }, null, 2)}\n`);
    return { directory, resumed: true };
  }
  if (existsSync(directory.root) && readdirSync(directory.root).length > 0) {
    const what = existsSync(join(directory.root, 'config.json')) ? 'a run directory (agentflow run)' : 'files but no eval-config.json';
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--out ${directory.root} holds ${what}; an eval starts in an empty or new folder. Choose another --out.`,
      details: { out: directory.root },
    });
  }
  const file: EvalConfigFile = { kind: 'agentflow-eval', createdAt: now().toISOString(), settings, connection };
  writeFileAtomic(directory.config, `${JSON.stringify(file, null, 2)}\n`);
  return { directory, resumed: false };
}

/** The records written so far; a line cut short by a kill is ignored (readJsonl). */
export function readEvalRecords(directory: EvalDirectory): EvalRecord[] {
  return readJsonl(directory.records, { schema: evalRecordSchema, allowMissing: true });
}

/**
 * The trajectories of `ids`, the last line of each id winning: a run killed between its
 * trajectory and its record is run again, and its second trajectory is the recorded one.
 */
export function readEvalTrajectories(directory: EvalDirectory, ids: ReadonlySet<string>): Trajectory[] {
  const byId = new Map<string, Trajectory>();
  for (const trajectory of readJsonl(directory.trajectories, { schema: trajectorySchema, allowMissing: true })) {
    if (ids.has(trajectory.id)) byId.set(trajectory.id, trajectory);
  }
  return [...byId.values()];
}
