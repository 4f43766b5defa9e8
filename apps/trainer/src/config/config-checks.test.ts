import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, loadConfig } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from './schema';

// Configs a careless user or an attacker hands in (issue 21): each is an INVALID_CONFIG naming
// the file, the key and what was expected, before any work starts (the CLI maps it to exit 2).
// The checks of the file itself (a regular file of UTF-8 text, bounded in size and nesting) are
// core's loader's: packages/core/src/config/config-text.test.ts.

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
