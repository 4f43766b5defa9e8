import { describe, expect, it } from 'vitest';
import { loadConfig } from '@agentflow/core';
import { isPlainObject } from '@agentflow/core';
import { runConfigSchema } from './schema';

type Leaf = { path: string[]; value: unknown };

/** Every scalar, list or null of the resolved default, by key path; a block's `kind` aside (setting it changes the block). */
function leavesOf(value: unknown, path: string[] = []): Leaf[] {
  if (!isPlainObject(value) || (path.length > 0 && Object.keys(value).length === 0)) return [{ path, value }];
  return Object.entries(value).flatMap(([key, entry]) => (key === 'kind' ? [] : leavesOf(entry, [...path, key])));
}

/** Values worth trying in place of a default: near it, and of its type. */
function candidates(value: unknown): unknown[] {
  if (typeof value === 'number') return [value + 1, value * 2, value / 2, value - 1, 1, 0.5];
  if (typeof value === 'boolean') return [!value];
  if (typeof value === 'string') return [`${value}-set`, 'cpu', 'constant', 'mse', 'text', 'drop', 'vector', 'sequence-mean', 'population', 'either', 'float32', 'log-probs'];
  // An empty list: a weight name (frozen patterns, the lists of strings the default leaves empty) or a step (prm.refreshAt).
  if (Array.isArray(value)) return value.length > 1 ? [value.slice(0, 1)] : value.length === 1 ? [[...value, ...value]] : [['model.embed_tokens.weight'], [15]];
  if (value === null) return [1, 100, 0.1];
  return [];
}

const at = (root: unknown, path: readonly string[]) => path.reduce<unknown>((node, key) => (isPlainObject(node) ? node[key] : undefined), root);

function withValue(root: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  return { ...(root as Record<string, unknown>), [head!]: withValue((root as Record<string, unknown>)[head!], rest, value) };
}

/** Settings whose default follows another one: setting the first moves the second with it. */
const FOLLOWS: Record<string, string[]> = { 'train.promptsPerBatch': ['train.promptsPerMiniBatch'] };

/** Leaves no other value of their type can take without changing another key (an enum of one, a list whose items are programs), or null where a block goes (prm.lora, warmStart.check.abandon). */
const ONLY_DEFAULT = new Set(['policy.model.preset', 'prm.backbone.preset', 'fixedModules', 'memory.crossTask', 'tools.webSearch', 'tools.wikipedia', 'prm.lora', 'memory.mode', 'warmStart.check.abandon']);

describe('--set on the built-in default', () => {
  const defaults = runConfigSchema.parse({});
  const leaves = leavesOf(defaults).filter((leaf) => leaf.path.length > 1);

  it('finds a nested key in every block of the default', () => {
    const blocks = new Set(leaves.map((leaf) => leaf.path[0]));
    expect([...blocks].sort()).toEqual(Object.keys(defaults).filter((key) => isPlainObject((defaults as Record<string, unknown>)[key])).sort());
    expect(leaves.length).toBeGreaterThan(80);
  });

  it('sets each nested key without --config, and every other key keeps its default', () => {
    const unset: string[] = [];
    for (const leaf of leaves) {
      const key = leaf.path.join('.');
      let set = false;
      for (const value of candidates(leaf.value)) {
        let config: unknown;
        try {
          config = loadConfig(undefined, runConfigSchema, { overrides: [`${key}=${JSON.stringify(value)}`] });
        } catch {
          continue;
        }
        let expected = withValue(defaults, leaf.path, value);
        for (const follower of FOLLOWS[key] ?? []) expected = withValue(expected, follower.split('.'), at(config, follower.split('.')));
        expect(config, `--set ${key}=${JSON.stringify(value)}`).toEqual(expected);
        set = true;
        break;
      }
      if (!set) unset.push(key);
    }
    // Every key took a value other than its default, but those that cannot.
    expect(unset.sort()).toEqual([...ONLY_DEFAULT].filter((key) => leaves.some((leaf) => leaf.path.join('.') === key)).sort());
  });

  it.each([['task.trainTasks=100'], ['label.samples=2'], ['task.levels=[1]']])('takes --set %s, as with --config configs/default.yaml', (override) => {
    const config = loadConfig(undefined, runConfigSchema, { overrides: [override] });
    expect(config.task.kind).toBe('world');
    expect(config.label.kind).toBe('monte-carlo');
  });
});
