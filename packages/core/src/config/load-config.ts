import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { AgentFlowError, describeValue } from '../errors/agentflow-error';
import { checkTextNesting, checkValueDepth, readConfigText } from './config-text';
import { applyOverrides, parseOverride } from './overrides';

/**
 * Where a config value came from, printed before each error line: a string (a file path), or
 * a function that names the source of the value at an offending key path.
 */
export type ConfigOrigin = string | ((keyPath: readonly PropertyKey[]) => string);

/** What {@link loadConfig} lays over the config file, and what it lays it at. */
export interface LoadConfigSettings {
  /** `--set KEY.PATH=VALUE` overrides, applied in order to the raw config before validation. */
  overrides?: readonly string[];
  /**
   * The resolved built-in default the overrides start a missing block from (see
   * {@link applyOverrides}). Default: the schema's output for `{}`, when `{}` is valid.
   */
  defaults?: unknown;
}

/**
 * Reads a YAML or JSON config file (JSON when the name ends in `.json`) without validating it.
 * An empty file is the empty config `{}`. The file is checked before it is parsed (a regular
 * file of UTF-8 text, of bounded size and nesting: see {@link readConfigText}), so each failure is an
 * INVALID_CONFIG naming the file.
 */
export function readConfigFile(path: string): unknown {
  const text = readConfigText(path);
  checkTextNesting(text, path);
  const json = extname(path) === '.json';
  let value: unknown;
  try {
    value = (json ? JSON.parse(text) : parseYaml(text)) ?? {};
  } catch (cause) {
    const overflow = cause instanceof RangeError || /call stack/i.test((cause as Error).message);
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: overflow
        ? `${path}: nested too deeply to parse as ${json ? 'JSON' : 'YAML'}; a config nests a few levels.`
        : `${path}: not valid ${json ? 'JSON' : 'YAML'}: ${(cause as Error).message}`,
      cause,
      details: { path },
    });
  }
  checkValueDepth(value, path);
  return value;
}

/**
 * Validates a raw config against `schema`. Every problem is reported, all at once, in one
 * INVALID_CONFIG whose lines read `ORIGIN: key.path: what was expected, found what was there`
 * (an unknown key: `ORIGIN: key.path: what zod says`), ORIGIN being `origin` or what it names
 * for the key path. The value is first bounded in depth ({@link checkValueDepth}), whatever it
 * came from.
 */
export function validateConfig<Schema extends z.ZodType>(raw: unknown, schema: Schema, origin: ConfigOrigin): z.infer<Schema> {
  // A value from anywhere (a file, a --set, a run directory's config.json) is bounded before zod walks it.
  checkValueDepth(raw, typeof origin === 'string' ? origin : origin([]));
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const originOf = typeof origin === 'string' ? () => origin : origin;
  const lines = parsed.error.issues.map((issue) => {
    const keyPath = issue.path.map(String).join('.') || '(root)';
    if (issue.code === 'unrecognized_keys') {
      // Each unknown key may come from a different place (the file, or one --set).
      const origins = new Set(issue.keys.map((key) => originOf([...issue.path, key])));
      return `${[...origins].join(', ')}: ${keyPath}: ${issue.message}`;
    }
    return `${originOf(issue.path)}: ${keyPath}: ${issue.message}, found ${describeValue(valueAt(raw, issue.path))}`;
  });
  throw new AgentFlowError({
    code: 'INVALID_CONFIG',
    message: lines.join('\n'),
    cause: parsed.error,
    details: { origin: typeof origin === 'string' ? origin : undefined, keyPaths: parsed.error.issues.map((issue) => issue.path.map(String).join('.')) },
  });
}

/**
 * Reads a YAML or JSON config file (or starts from `{}`, the schema's built-in default, when
 * `path` is undefined), applies the `--set` overrides over it (a block the config leaves out is
 * set at the built-in default's kind: with a default `label: { kind: 'monte-carlo', samples: 4 }`,
 * `--set label.samples=2` sets the default's Monte-Carlo labelling), and validates the result
 * against `schema`, as transformers' HfArgumentParser reads a file and the command line. An
 * error line names the `--set` that put the offending value there, else the file
 * (`FILE + --set` when overrides were given, since they may be what made the file's value
 * wrong; `default config` when there is no file).
 *
 * ```ts
 * const config = loadConfig('configs/run.yaml', runSchema, { overrides: ['train.steps=2'] });
 * ```
 */
export function loadConfig<Schema extends z.ZodType>(
  path: string | undefined,
  schema: Schema,
  settings: LoadConfigSettings = {},
): z.infer<Schema> {
  const raw = path === undefined ? {} : readConfigFile(path);
  const overrides = settings.overrides ?? [];
  const base = path ?? 'default config';
  if (overrides.length === 0) return validateConfig(raw, schema, base);
  // The built-in default tells which kind a block the config leaves out has (see applyOverrides).
  const merged = applyOverrides(raw, overrides, { defaults: 'defaults' in settings ? settings.defaults : schemaDefault(schema) });
  return validateConfig(merged, schema, overrideOrigin(`${base} + --set`, overrides));
}

function schemaDefault(schema: z.ZodType): unknown {
  const parsed = schema.safeParse({});
  return parsed.success ? parsed.data : undefined;
}

/** Names the last `--set` whose key path leads to, or lies inside, the offending key path. */
function overrideOrigin(fallback: string, overrides: readonly string[]): ConfigOrigin {
  const paths = overrides.map((text) => parseOverride(text).path);
  return (keyPath) => {
    const at = keyPath.map(String);
    for (let index = paths.length - 1; index >= 0; index--) {
      const path = paths[index]!;
      const shared = Math.min(path.length, at.length);
      if (path.slice(0, shared).every((segment, position) => segment === at[position])) {
        return `--set ${JSON.stringify(overrides[index])}`;
      }
    }
    return fallback;
  };
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
