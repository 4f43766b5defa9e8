import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_CONFIG_DEPTH } from './config-text';
import { loadConfig, readConfigFile } from './load-config';
import { parseOverride } from './overrides';
import { runConfigSchema } from './schema';

// Configs a careless user or an attacker hands in (issue 21): each is an INVALID_CONFIG naming
// the file, the key and what was expected, before any work starts (the CLI maps it to exit 2).

const dir = mkdtempSync(join(tmpdir(), 'config-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** The INVALID_CONFIG that `load` throws, and how long it took. */
function failure(load: () => unknown): { error: AgentFlowError; ms: number } {
  const start = Date.now();
  let caught: unknown;
  try {
    load();
  } catch (error) {
    caught = error;
  }
  expect(AgentFlowError.isInstance(caught), String(caught)).toBe(true);
  expect((caught as AgentFlowError).code).toBe('INVALID_CONFIG');
  return { error: caught as AgentFlowError, ms: Date.now() - start };
}

const load = (path: string) => () => loadConfig(path, runConfigSchema);

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
    expect(loadConfig(file('bom.json', `\uFEFF${JSON.stringify({ seed: 4 })}`), runConfigSchema).seed).toBe(4);
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
    expect(loadConfig(quoted, runConfigSchema).name).toBe('['.repeat(200));
  });

  it('refuses a --set value nested 100,000 deep', () => {
    expect(() => parseOverride(`seed=${'['.repeat(100_000)}`)).toThrow(/--set "seed=\[\[\[.*\.\.\.": lists and objects nest more than 64 levels deep/);
  });

  it.each([
    ['task.trainTasks', { task: { kind: 'world', trainTasks: 1e12 } }, /task\.trainTasks: Too big: expected number to be <=100000, found 1000000000000/],
    ['task.testTasks', { task: { kind: 'world', testTasks: 1e9 } }, /task\.testTasks: Too big: expected number to be <=10000/],
    ['task.entities', { task: { kind: 'world', entities: 1e9 } }, /task\.entities: Too big/],
    ['task.planner.hiddenSize', { task: { kind: 'world', planner: { hiddenSize: 1e9 } } }, /task\.planner\.hiddenSize: Too big: expected number to be <=4096, found 1000000000/],
    ['task.planner.layers', { task: { kind: 'world', planner: { hiddenSize: 4096, heads: 32, keyValueHeads: 8, layers: 64, intermediateSize: 16384 } } }, /task\.planner\.layers: the planner's decoder layers would hold \d+ parameters, more than 1000000000/],
    ['task.planner.keyValueHeads', { task: { kind: 'world', planner: { heads: 4, keyValueHeads: 3 } } }, /task\.planner\.keyValueHeads: keyValueHeads must divide heads \(4\)/],
    ['task.planner.hiddenSize (partial heads)', { task: { kind: 'world', planner: { hiddenSize: 30, heads: 4 } } }, /task\.planner\.hiddenSize: hiddenSize must be a multiple of heads \(4\), got 30/],
    ['task.planner.hiddenSize (odd head width)', { task: { kind: 'world', planner: { hiddenSize: 12, heads: 4 } } }, /hiddenSize \/ heads \(3\) must be even for rotary embeddings/],
    ['policy.maxNewTokens', { policy: { maxNewTokens: 1e9 } }, /policy\.maxNewTokens: Too big/],
  ])('bounds %s in the schema, naming the file and the key', (_, content, expected) => {
    const path = file('bounds.json', JSON.stringify(content));
    const { error, ms } = failure(load(path));
    expect(error.message).toContain(`${path}: `);
    expect(error.message).toMatch(expected);
    expect(ms).toBeLessThan(2000);
  });
});
