import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunDirectory } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRun, resolveConfig } from './open-run';
import { thrownAgentFlowError } from '../testing/thrown-error.test-helper';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentflow-open-run-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const failure = thrownAgentFlowError;

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** A run whose first stage finished, its writer gone (its lock released). */
const started = (run: RunDirectory) => {
  run.markStageDone('warm-start');
  run.close();
};

describe('resolveConfig with --set', () => {
  it('applies the overrides to the file before validation, a later one winning', () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, 'name: from-file\nseed: 3\npolicy:\n  temperature: 0.7\n');
    const config = resolveConfig({ config: file, set: ['policy.temperature=0.5', 'device=cpu', 'seed=4', 'seed=5'] });
    expect(config).toMatchObject({ name: 'from-file', seed: 5, device: 'cpu', policy: { temperature: 0.5 } });
  });

  it('applies the overrides to the embedded default', () => {
    expect(resolveConfig({ set: ['name=cli'] }).name).toBe('cli');
  });

  it('names the key path and the --set of a value the schema rejects', () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, 'seed: 3\n');
    const error = failure(() => resolveConfig({ config: file, set: ['name=ok', 'seed=abc'] }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toMatch(/^--set "seed=abc": seed: .*number.*, found "abc"$/);
  });

  it('names the --set of an unknown key', () => {
    const error = failure(() => resolveConfig({ set: ['policy.temprature=0.5'] }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('--set "policy.temprature=0.5": policy: ');
    expect(error.message).toContain('temprature');
  });

  it('still names the file for a bad value the overrides did not touch', () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, 'device: gpu\n');
    const error = failure(() => resolveConfig({ config: file, set: ['seed=1'] }));
    expect(error.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\+ --set: device: .*found "gpu"$`));
  });

  it('reports a malformed --set as an invalid argument', () => {
    const error = failure(() => resolveConfig({ set: ['seed'] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe('--set "seed": expected KEY.PATH=VALUE, e.g. --set train.totalSteps=2');
  });

  it('rejects an unknown --credit before reading anything', () => {
    const error = failure(() => resolveConfig({ config: join(dir, 'missing.yaml'), credit: 'x' }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe('--credit must be one of process, process-sum, process-min, outcome, mix, gigpo; got "x".');
  });
});

describe('openRun with --set', () => {
  it("records the override in a new run's config.json", () => {
    const out = join(dir, 'run');
    const { config, run } = openRun({ out, set: ['seed=9', 'policy.temperature=0.25'] });
    expect(config.seed).toBe(9);
    expect(readJson(run.paths.config)).toMatchObject({ seed: 9, out, policy: { temperature: 0.25 } });
  });

  it('applies --set on resume and rewrites config.json with what the run now uses', () => {
    const out = join(dir, 'run');
    started(openRun({ out, set: ['seed=1'] }).run);
    const { config, resumed, run } = openRun({ resume: out, set: ['seed=5'] });
    expect(resumed).toBe(true);
    expect(config.seed).toBe(5);
    expect(readJson(run.paths.config)).toMatchObject({ seed: 5, out });
  });

  it('leaves config.json untouched on resume without --set', () => {
    const out = join(dir, 'run');
    const { run } = openRun({ out });
    started(run);
    const compact = JSON.stringify(readJson(run.paths.config));
    writeFileSync(run.paths.config, compact);
    const resumed = openRun({ resume: out });
    resumed.run.close();
    expect(resumed.config.out).toBe(out);
    expect(readFileSync(run.paths.config, 'utf8')).toBe(compact);
  });

  it('refuses to move a resumed run with --set out=...', () => {
    const out = join(dir, 'run');
    started(openRun({ out }).run);
    const before = readFileSync(join(out, 'config.json'), 'utf8');
    const error = failure(() => openRun({ resume: out, set: [`out=${join(dir, 'elsewhere')}`] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('a resumed run stays in its directory');
    expect(readFileSync(join(out, 'config.json'), 'utf8')).toBe(before);
  });
});

describe('openRun holds the run directory for one writer', () => {
  it('refuses a second writer while the first holds it, naming the holder, and lets the next one in once it closes', () => {
    const out = join(dir, 'run');
    const first = openRun({ out });
    first.run.markStageDone('warm-start');
    const error = failure(() => openRun({ resume: out }));
    expect(error.code).toBe('RUN_LOCKED');
    expect(error.message).toContain('(agentflow run)');
    first.run.close();
    const second = openRun({ resume: out, set: ['seed=3'] });
    expect(second.run.lock?.owner.purpose).toBe('agentflow run --resume');
    second.run.close();
  });
});
