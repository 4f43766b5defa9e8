import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentFlowError } from '../errors/agentflow-error';
import { MAX_CONFIG_DEPTH } from './config-text';
import { loadConfig, readConfigFile } from './load-config';
import { parseOverride } from './overrides';
import { thrownAgentFlowError } from './thrown-error.test-helper';

// Configs a careless user or an attacker hands in: each is an INVALID_CONFIG naming the file
// and what was wrong, before any parser recurses into it.

const dir = mkdtempSync(join(tmpdir(), 'config-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const schema = z.strictObject({ name: z.string().default('run'), seed: z.number().int().default(0) });

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** The INVALID_CONFIG that `load` throws, and how long it took. */
function failure(load: () => unknown): { error: AgentFlowError; ms: number } {
  const start = Date.now();
  const error = thrownAgentFlowError(load);
  expect(error.code).toBe('INVALID_CONFIG');
  return { error, ms: Date.now() - start };
}

const load = (path: string) => () => loadConfig(path, schema);

describe('config files that must not be trusted', () => {
  it('refuses a directory and a FIFO as the config path, without blocking', () => {
    const folder = join(dir, 'folder.yaml');
    mkdirSync(folder);
    expect(failure(load(folder)).error.message).toBe(`${folder}: is a directory; expected a YAML or JSON config file.`);
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(failure(load(fifo)).error.message).toBe(`${fifo}: is a FIFO; expected a YAML or JSON config file.`);
    expect(failure(load(join(dir, 'missing.yaml'))).error.message).toMatch(/missing\.yaml: config file not found/);
  });

  it('refuses a file that is not UTF-8, naming the byte, its offset and line', () => {
    const path = file('latin1.yaml', Buffer.concat([Buffer.from('seed: 1\nname: "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]));
    expect(failure(load(path)).error.message).toBe(`${path}: not UTF-8 text: byte 0xe9 at offset 18 (line 2); save the file as UTF-8.`);
    // A byte-order mark is UTF-8 and is not part of the config.
    expect(loadConfig(file('bom.json', `\uFEFF${JSON.stringify({ seed: 4 })}`), schema).seed).toBe(4);
  });

  it.each([
    ['deep.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ['deep.yaml', `name: x\nseed: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`],
    ['deep-objects.yaml', `${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}`],
  ])('refuses %s, 100,000 levels deep, before parsing it, in milliseconds', (name, content) => {
    const path = file(name, content);
    const { error, ms } = failure(load(path));
    expect(error.message).toMatch(new RegExp(`^${path}: lists and objects nest more than ${MAX_CONFIG_DEPTH} levels deep \\(line \\d+\\)`));
    expect(ms).toBeLessThan(2000);
  });

  it('refuses YAML nested by indentation past the bound, and brackets inside strings do not count', () => {
    const lines = Array.from({ length: 70 }, (_, depth) => `${'  '.repeat(depth)}k${depth}:`);
    const path = file('indented.yaml', `${lines.join('\n')} 1\n`);
    expect(failure(() => readConfigFile(path)).error.message).toBe(`${path}: lists and objects nest more than ${MAX_CONFIG_DEPTH} levels deep; a config nests a few levels.`);
    const quoted = file('quoted.yaml', `name: "${'['.repeat(200)}"\n# ${'{'.repeat(200)}\n`);
    expect(loadConfig(quoted, schema).name).toBe('['.repeat(200));
  });

  it('refuses a --set value nested 100,000 deep', () => {
    expect(() => parseOverride(`seed=${'['.repeat(100_000)}`)).toThrow(/--set "seed=\[\[\[.*\.\.\.": lists and objects nest more than 64 levels deep/);
  });
});
