import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig, readConfigFile, validateConfig } from './load-config';
import { thrownAgentFlowError } from './thrown-error.test-helper';

const dir = mkdtempSync(join(tmpdir(), 'load-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A small config of a made-up command: a seed, a device, and a block that is a discriminated union. */
const schema = z.strictObject({
  seed: z.number().int().default(0),
  device: z.enum(['cpu', 'cuda']).default('cpu'),
  label: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('monte-carlo'), samples: z.number().int().positive().default(4) }),
      z.strictObject({ kind: z.literal('judge'), model: z.string().default('judge-model') }),
    ])
    .default({ kind: 'monte-carlo', samples: 4 }),
});

const invalidConfig = (run: () => unknown) => {
  const error = thrownAgentFlowError(run);
  expect(error.code).toBe('INVALID_CONFIG');
  return error.message;
};

describe('readConfigFile', () => {
  it('reads YAML, JSON when the name ends in .json, and an empty file as {}', () => {
    expect(readConfigFile(file('a.yaml', 'seed: 3\nlabel:\n  kind: judge\n'))).toEqual({ seed: 3, label: { kind: 'judge' } });
    expect(readConfigFile(file('a.json', '{"seed": 3}'))).toEqual({ seed: 3 });
    expect(readConfigFile(file('empty.yaml', ''))).toEqual({});
  });

  it('names the file and the format of text that does not parse', () => {
    const yaml = file('broken.yaml', 'seed: [1, 2\n');
    expect(invalidConfig(() => readConfigFile(yaml))).toMatch(new RegExp(`^${yaml}: not valid YAML: `));
    const json = file('yaml-in.json', 'seed: 3\n');
    expect(invalidConfig(() => readConfigFile(json))).toMatch(new RegExp(`^${json}: not valid JSON: `));
  });
});

describe('validateConfig', () => {
  it('reports every problem at once, one line each, naming the origin, the key path and what was there', () => {
    const message = invalidConfig(() => validateConfig({ seed: 'abc', device: 'tpu', extra: 1 }, schema, 'run.yaml'));
    expect(message.split('\n')).toEqual([
      'run.yaml: seed: Invalid input: expected number, received string, found "abc"',
      'run.yaml: device: Invalid option: expected one of "cpu"|"cuda", found "tpu"',
      'run.yaml: (root): Unrecognized key: "extra"',
    ]);
  });

  it('asks a function for the origin of each offending key path', () => {
    const origin = (keyPath: readonly PropertyKey[]) => (keyPath[0] === 'seed' ? 'the command line' : 'run.yaml');
    expect(invalidConfig(() => validateConfig({ seed: -0.5, device: 'tpu' }, schema, origin)).split('\n')).toEqual([
      'the command line: seed: Invalid input: expected int, received number, found -0.5',
      'run.yaml: device: Invalid option: expected one of "cpu"|"cuda", found "tpu"',
    ]);
  });

  it('returns the parsed config, defaults filled in', () => {
    expect(validateConfig({ seed: 2 }, schema, 'run.yaml')).toEqual({ seed: 2, device: 'cpu', label: { kind: 'monte-carlo', samples: 4 } });
  });
});

describe('loadConfig', () => {
  it('starts from the built-in default without a file, and names it in errors', () => {
    expect(loadConfig(undefined, schema)).toEqual(schema.parse({}));
    expect(loadConfig(undefined, schema, { overrides: ['seed=5'] }).seed).toBe(5);
    expect(invalidConfig(() => loadConfig(undefined, z.strictObject({ seed: z.number() })))).toMatch(/^default config: seed: Invalid input: expected number/);
  });

  it('names the --set that put a bad value or an unknown key there, else the file and --set', () => {
    const path = file('run.yaml', 'device: tpu\n');
    expect(invalidConfig(() => loadConfig(path, schema, { overrides: ['seed=abc', 'labl.samples=2'] })).split('\n')).toEqual([
      '--set "seed=abc": seed: Invalid input: expected number, received string, found "abc"',
      `${path} + --set: device: Invalid option: expected one of "cpu"|"cuda", found "tpu"`,
      '--set "labl.samples=2": (root): Unrecognized key: "labl"',
    ]);
    expect(invalidConfig(() => loadConfig(path, schema))).toBe(`${path}: device: Invalid option: expected one of "cpu"|"cuda", found "tpu"`);
    expect(invalidConfig(() => loadConfig(undefined, schema, { overrides: ['seed=x'] }))).toBe(
      '--set "seed=x": seed: Invalid input: expected number, received string, found "x"',
    );
  });

  it("starts a block the config leaves out at the built-in default's kind, or at the kind of the defaults passed in", () => {
    expect(loadConfig(undefined, schema, { overrides: ['label.samples=2'] }).label).toEqual({ kind: 'monte-carlo', samples: 2 });
    expect(loadConfig(undefined, schema, { overrides: ['label.model=m'], defaults: { label: { kind: 'judge' } } }).label).toEqual({ kind: 'judge', model: 'm' });
    // Without a default, the block starts with no kind, which the schema refuses (no --set wrote label.kind).
    expect(invalidConfig(() => loadConfig(undefined, schema, { overrides: ['label.samples=2'], defaults: undefined }))).toBe(
      "default config + --set: label.kind: Invalid discriminator value. Expected 'monte-carlo' | 'judge', found undefined",
    );
  });
});
