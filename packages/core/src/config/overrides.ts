import { parse as parseYaml } from 'yaml';
import { AgentFlowError, describeValue } from '../errors/agentflow-error';
import { checkTextNesting } from './config-text';

/** A plain object (not null, not a list): a config block as YAML or JSON gives it. */
/** A JSON object (not null, not an array): a block of a config. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One `--set KEY.PATH=VALUE`: where it goes in the config, and the value it puts there. */
export interface ConfigOverride {
  /** Key path, e.g. `['train', 'steps']`; a segment that is a number indexes into a list. */
  path: string[];
  value: unknown;
}

const example = 'e.g. --set train.totalSteps=2';

/**
 * Parses `KEY.PATH=VALUE` as verl (Hydra) users write it. VALUE is YAML, so `2` is a number,
 * `true` a boolean, `[1, 2]` a list, `{a: 1}` an object, `null` null and `models/x` a string;
 * quote it (`name='"2"'`) to force a string. An empty VALUE is the empty string, as in Hydra.
 * Everything after the first `=` is the value, so values may contain `=`.
 */
export function parseOverride(text: string): ConfigOverride {
  const equals = text.indexOf('=');
  const key = equals < 0 ? '' : text.slice(0, equals).trim();
  if (key === '') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--set ${JSON.stringify(text)}: expected KEY.PATH=VALUE, ${example}`,
      details: { override: text },
    });
  }
  const path = key.split('.');
  if (path.some((segment) => segment.trim() === '')) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--set ${JSON.stringify(text)}: the key ${JSON.stringify(key)} has an empty segment; expected KEY.PATH=VALUE, ${example}`,
      details: { override: text },
    });
  }
  const source = text.slice(equals + 1);
  if (source.trim() === '') return { path: path.map((segment) => segment.trim()), value: '' };
  checkTextNesting(source, `--set ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`);
  let value: unknown;
  try {
    value = parseYaml(source);
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--set ${JSON.stringify(text)}: the value is not valid YAML (${(cause as Error).message.split('\n')[0]}); quote it to pass a string, e.g. --set '${key}="${source}"'`,
      cause,
      details: { override: text },
    });
  }
  return { path: path.map((segment) => segment.trim()), value };
}

/** What {@link applyOverrides} lays the overrides over, beside the raw config. */
export interface ApplyOverridesSettings {
  /**
   * The resolved built-in default (the schema's output for `{}`). A `--set` whose path enters a
   * block the raw config lacks, where the default has a block with a `kind` (a discriminated
   * union's tag), starts that block at the default's kind: with a default
   * `task: { kind: 'world', trainTasks: 800 }`, `--set task.trainTasks=100` sets a key of the
   * default's world task instead of a task of no kind. Without it, missing blocks start empty.
   */
  defaults?: unknown;
}

/**
 * Applies `--set` overrides, in order (a later one wins), to a raw config: the file's
 * contents before validation. Missing or `null` objects along the path are created (a block of
 * the default with a `kind` is created at that kind: see {@link ApplyOverridesSettings}); a
 * path through any other non-object (`seed.x` where seed is a number) is an INVALID_ARGUMENT
 * naming the key. An object value replaces what was there rather than merging into it.
 *
 * Setting a block's `kind` to another kind starts the block anew as `{ kind }`, so the new
 * kind's defaults apply instead of the old kind's keys; earlier overrides inside that block
 * are laid over it again, so the order of `--set label.endpoint.model=x --set label.kind=judge`
 * does not matter. Pure: the input is never mutated; only the objects along each path are copied.
 */
export function applyOverrides(raw: unknown, overrides: readonly string[], settings: ApplyOverridesSettings = {}): unknown {
  let config: unknown = raw ?? {};
  const applied: { path: string[]; value: unknown; text: string }[] = [];
  for (const text of overrides) {
    const { path, value } = parseOverride(text);
    const walk: OverrideWalk = { value, text, defaults: settings.defaults };
    config = setAt(config, path, walk);
    if (path[path.length - 1] === 'kind' && walk.kindChanged) {
      // The block restarted at its new kind: what earlier overrides put inside it goes back in.
      const block = path.slice(0, -1);
      for (const earlier of applied) {
        const inside = earlier.path.length > block.length && block.every((segment, index) => earlier.path[index] === segment);
        if (inside && earlier.path[block.length] !== 'kind') config = setAt(config, earlier.path, { value: earlier.value, text: earlier.text, defaults: undefined });
      }
    }
    applied.push({ path, value, text });
  }
  return config;
}

interface OverrideWalk {
  value: unknown;
  text: string;
  /** The default's node at the walk's depth; undefined once the raw config leaves the default's kinds. */
  defaults: unknown;
  /** Set when the override changed the kind of an existing block. */
  kindChanged?: boolean;
}

function setAt(node: unknown, path: readonly string[], walk: OverrideWalk, depth = 0): unknown {
  if (depth === path.length) return walk.value;
  const segment = path[depth]!;
  if (Array.isArray(node)) {
    const index = /^\d+$/.test(segment) ? Number(segment) : -1;
    if (index < 0 || index >= node.length) {
      throw cannotSet(node, path, depth, walk.text, `a list of ${node.length}; index it with 0 to ${node.length - 1}, or set the whole list`);
    }
    const copy = [...node];
    copy[index] = setAt(node[index], path, { ...walk, defaults: undefined }, depth + 1);
    return copy;
  }
  const defaults = walk.defaults;
  let record = node ?? (isPlainObject(defaults) && typeof defaults.kind === 'string' ? { kind: defaults.kind } : {});
  if (typeof record !== 'object') throw cannotSet(node, path, depth, walk.text, 'not an object');
  if (segment === 'kind' && depth === path.length - 1 && isPlainObject(record) && record.kind !== undefined && record.kind !== walk.value) {
    walk.kindChanged = true;
    record = {};
  }
  // Past a block whose kind is not the default's, the default says nothing about what lies inside.
  const sameKind = isPlainObject(defaults) && isPlainObject(record) && (record.kind === undefined || record.kind === defaults.kind);
  walk.defaults = sameKind && Object.hasOwn(defaults, segment) ? defaults[segment] : undefined;
  const child = Object.hasOwn(record, segment) ? (record as Record<string, unknown>)[segment] : undefined;
  // A computed key defines an own property, so `__proto__` cannot reach a prototype.
  return { ...record, [segment]: setAt(child, path, walk, depth + 1) };
}

function cannotSet(node: unknown, path: readonly string[], depth: number, text: string, what: string): AgentFlowError {
  const parent = path.slice(0, depth).join('.') || 'the config';
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `--set ${JSON.stringify(text)}: cannot set ${path.join('.')}: ${parent} is ${describeValue(node)}, ${what}.`,
    details: { override: text, key: path.join('.') },
  });
}

/**
 * Commander's argument parser for a repeatable `--set <key=value>`
 * (`.option('--set <key=value>', '...', collectOverrides, [])`): collects the values in
 * order. They are checked later, by {@link applyOverrides}, with its messages.
 */
export function collectOverrides(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}
