import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, writeFileAtomic } from '@agentflow/core';
import { loadConfig } from '../config/load-config';
import { type RunConfig, runConfigSchema } from '../config/schema';
import { openRunDirectory, type RunDirectory } from './run-directory';

export interface OpenRunSettings {
  config?: string;
  out?: string;
  resume?: string;
  credit?: string;
  now?: () => Date;
}

/** The config of a run: from a file or the embedded default, with command-line overrides. */
export function resolveConfig(settings: OpenRunSettings): RunConfig {
  const base = settings.config ? loadConfig(settings.config, runConfigSchema) : runConfigSchema.parse({});
  if (settings.credit === undefined) return base;
  const credit = runConfigSchema.shape.train.unwrap().shape.credit.safeParse(settings.credit);
  if (!credit.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--credit must be one of process, outcome, mix; got ${JSON.stringify(settings.credit)}.`,
    });
  }
  return { ...base, train: { ...base.train, credit: credit.data } };
}

const stamp = (date: Date) => date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

/**
 * Opens the run directory: `--resume DIR` continues a run with the config it was started
 * with; otherwise a new directory (`--out`, the config's `out`, or `runs/<time>`) that must
 * not hold a run already, so a finished run is never overwritten.
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
    const config = runConfigSchema.parse(JSON.parse(readFileSync(configPath, 'utf8')));
    return { config, run: openRunDirectory(settings.resume, { mustExist: true }), resumed: true };
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
  const run = openRunDirectory(out);
  writeFileAtomic(run.paths.config, `${JSON.stringify(resolved, null, 2)}\n`);
  return { config: resolved, run, resumed: false };
}
