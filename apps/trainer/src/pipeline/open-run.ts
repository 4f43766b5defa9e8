import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, loadConfig, openRunDirectory, parseOverride, type RunDirectory, writeFileAtomic } from '@agentflow/core';
import { type RunConfig, runConfigSchema } from '../config/schema';

export interface OpenRunSettings {
  config?: string;
  out?: string;
  resume?: string;
  credit?: string;
  /** `--set KEY.PATH=VALUE` overrides, applied in order (after `--credit`) before validation. */
  set?: readonly string[];
  now?: () => Date;
  /** What this process does in the run directory, named to a second writer its lock refuses (default `agentflow run`, or `agentflow run --resume`). */
  purpose?: string;
}

/** What each `--credit NAME` stands for, as a `--set` of `train.credit` (`process` is `process-sum`). */
const creditOverrides: Record<string, string> = {
  process: 'train.credit={kind: process-sum}',
  'process-sum': 'train.credit={kind: process-sum}',
  'process-min': 'train.credit={kind: process-min}',
  outcome: 'train.credit={kind: outcome}',
  mix: 'train.credit={kind: mix}',
  gigpo: 'train.credit={kind: gigpo}',
};

/** The `--credit` names of `run` and `sweep`. */
export const CREDIT_OPTIONS = Object.keys(creditOverrides);

function creditOverride(credit: string): string {
  const override = Object.hasOwn(creditOverrides, credit) ? creditOverrides[credit] : undefined;
  if (override === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--credit must be one of ${CREDIT_OPTIONS.join(', ')}; got ${JSON.stringify(credit)}.`,
    });
  }
  return override;
}

/**
 * The config of a run: a file or the embedded default, then `--credit` and the `--set`
 * overrides (a later one wins), validated once.
 */
export function resolveConfig(settings: OpenRunSettings): RunConfig {
  const overrides = [...(settings.credit === undefined ? [] : [creditOverride(settings.credit)]), ...(settings.set ?? [])];
  return loadConfig(settings.config, runConfigSchema, { overrides });
}

/**
 * The config of a resumed run: its recorded `config.json`, with the `--set` overrides applied.
 * When they change it, `config.json` is rewritten, so it always records what the run uses.
 */
function resumeConfig(configPath: string, set: readonly string[]): RunConfig {
  // Checked like any config file: a corrupt one is an INVALID_CONFIG naming the file and the key.
  if (set.length === 0) return loadConfig(configPath, runConfigSchema);
  const moved = set.find((text) => parseOverride(text).path[0] === 'out');
  if (moved !== undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--set ${JSON.stringify(moved)}: a resumed run stays in its directory; drop this --set, or start a new run with --out.`,
    });
  }
  const config = loadConfig(configPath, runConfigSchema, { overrides: set });
  const text = `${JSON.stringify(config, null, 2)}\n`;
  if (text !== readFileSync(configPath, 'utf8')) writeFileAtomic(configPath, text);
  return config;
}

/** A run directory name from a time: 20261201-143005. */
export const stamp = (date: Date) => date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

/**
 * Opens the run directory, holding its writer lock (release it with `run.close()`; a second
 * writer is refused with RUN_LOCKED naming the holder): `--resume DIR` continues a run with the config it was started
 * with (plus any `--set`, recorded back into its config.json); otherwise a new directory
 * (`--out`, the config's `out`, or `runs/<time>`) that must not hold a run already, so a
 * finished run is never overwritten.
 */
export function openRun(settings: OpenRunSettings): { config: RunConfig; run: RunDirectory; resumed: boolean } {
  if (settings.resume) {
    const configPath = join(settings.resume, 'config.json');
    if (!existsSync(configPath)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `--resume ${settings.resume}: ${configPath} is missing; expected a directory written by \`agentflow run\`.`,
      });
    }
    // The writer lock first: a second writer is refused before it rewrites config.json.
    const run = openRunDirectory(settings.resume, { mustExist: true, startHint: `Start a run with \`agentflow run --out ${settings.resume}\`.`, lock: { purpose: settings.purpose ?? 'agentflow run --resume' } });
    try {
      return { config: resumeConfig(configPath, settings.set ?? []), run, resumed: true };
    } catch (error) {
      run.close();
      throw error;
    }
  }
  const config = resolveConfig(settings);
  const out = settings.out ?? config.out ?? join('runs', stamp((settings.now ?? (() => new Date()))()));
  if (existsSync(join(out, 'state.json'))) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${out} already holds a run. Continue it with \`agentflow run --resume ${out}\`, or choose another --out.`,
    });
  }
  const resolved = { ...config, out };
  const run = openRunDirectory(out, { lock: { purpose: settings.purpose ?? 'agentflow run' } });
  writeFileAtomic(run.paths.config, `${JSON.stringify(resolved, null, 2)}\n`);
  return { config: resolved, run, resumed: false };
}
