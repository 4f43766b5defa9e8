import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, describeValue, readJsonl, type Trajectory, trajectorySchema, writeFileAtomic } from '@agentflow/core';
import { type BenchmarkEvalSettings, type EvalConfigFile, evalConfigFileSchema } from './benchmark-eval-settings';
import { type EvalRecord, evalRecordSchema } from './eval-record';
import { firstDifference } from './first-difference';

/** The files of an eval directory. */
export interface EvalDirectory {
  /** The folder, absolute. */
  root: string;
  /** The settings (compared on resume) and the connection: atomic writes. */
  config: string;
  /** One record per finished run, append-only. */
  records: string;
  /** One trajectory per finished run, append-only, written before its record. */
  trajectories: string;
  /** The metrics over the records so far: atomic writes. */
  summary: string;
  /** `eval.html`: the summary and a row per run, for a person (`renderEvalPage`). */
  page: string;
}

/** The files of the eval directory `root` (made absolute); nothing is read or written. */
export function evalDirectoryOf(root: string): EvalDirectory {
  const absolute = resolve(root);
  return {
    root: absolute,
    config: join(absolute, 'eval-config.json'),
    records: join(absolute, 'eval.jsonl'),
    trajectories: join(absolute, 'trajectories.jsonl'),
    summary: join(absolute, 'eval.json'),
    page: join(absolute, 'eval.html'),
  };
}

/** True when `root` holds an eval (its eval-config.json). */
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

/** How `openEvalDirectory` records the start, and names the way back in its errors. */
export interface OpenEvalDirectorySettings {
  /** The caller's record of how the models are reached (URLs, key variable, concurrency): written, never compared. Default `{}`. */
  connection?: Readonly<Record<string, unknown>>;
  /** The clock of `createdAt`. Default: the system clock. */
  now?: () => Date;
  /** What continues the eval in `root`, named when other settings are refused (a CLI: its resume command). */
  resumeCommand?: (root: string) => string;
  /** How the refusals name settings and the folder: a CLI gives its options. Default: plain words. */
  wording?: EvalDirectoryWording;
}

/** The words of {@link openEvalDirectory}'s refusals, for a caller that names things its own way. */
export interface EvalDirectoryWording {
  /** The option that sets a settings key (`samples` -> `--samples`), shown beside the key. */
  optionOf?: (key: string) => string | undefined;
  /** Who gives the new settings, with its verb. Default `these settings give` (a CLI: `this command gives`). */
  givenBy?: string;
  /** The option that names the folder (`--out`), shown before it. Default: the folder alone. */
  folderOption?: string;
}

/** The default way back, for a library caller. */
export const defaultResumeCommand = (root: string): string => `runBenchmarkEval on ${root} with the same settings`;

/**
 * Starts an eval in `root`, or continues the one there. A new eval needs an empty or absent
 * folder; a continued one must have the same settings in every key, else INVALID_ARGUMENT
 * names the first key that differs (`details`: key, recorded, given). The connection is
 * rewritten.
 */
export function openEvalDirectory(
  root: string,
  settings: BenchmarkEvalSettings,
  open: OpenEvalDirectorySettings = {},
): { directory: EvalDirectory; resumed: boolean } {
  const directory = evalDirectoryOf(root);
  const connection = open.connection ?? {};
  const wording = open.wording ?? {};
  const folder = wording.folderOption ?? 'folder';
  const option = (key: string) => {
    const name = wording.optionOf?.(key);
    return name ? ` (${name})` : '';
  };
  if (existsSync(directory.config)) {
    const recorded = readEvalConfig(directory);
    const difference = firstDifference(recorded.settings, settings);
    if (difference) {
      const changed =
        difference.key === 'data.sha256'
          ? `the data file ${settings.data.path} changed since the eval started (${difference.key} differs)`
          : `it was started with ${difference.key} = ${describeValue(difference.recorded)}${option(difference.key)}; ${wording.givenBy ?? 'these settings give'} ${describeValue(difference.given)}`;
      const resume = (open.resumeCommand ?? defaultResumeCommand)(directory.root);
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${directory.root} holds an eval with other settings: ${changed}. Continue it with its recorded settings (${resume}, see eval-config.json), or choose another ${folder}.`,
        details: { key: difference.key, recorded: difference.recorded, given: difference.given },
      });
    }
    writeFileAtomic(directory.config, `${JSON.stringify({ ...recorded, connection }, null, 2)}\n`);
    return { directory, resumed: true };
  }
  if (existsSync(directory.root) && readdirSync(directory.root).length > 0) {
    // A run directory of `agentflow run` has its config.json: say so rather than "files".
    const what = existsSync(join(directory.root, 'config.json')) ? 'a run directory (agentflow run)' : 'files but no eval-config.json';
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${wording.folderOption ? `${wording.folderOption} ` : ''}${directory.root} holds ${what}; an eval starts in an empty or new folder. Choose another ${folder}.`,
      details: { root: directory.root },
    });
  }
  const now = open.now ?? (() => new Date());
  const file: EvalConfigFile = { kind: 'agentflow-eval', createdAt: now().toISOString(), settings, connection: { ...connection } };
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
