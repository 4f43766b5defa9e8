/** Where two JSON values first differ: the dotted key path, and the value on each side. */
export interface JsonDifference {
  key: string;
  recorded: unknown;
  given: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The first key (depth first, in `recorded`'s key order, then keys only `given` has) whose
 * values differ; undefined when the two are equal as JSON. Lists compare whole: `[1983, 2023]`
 * against `[1983, 2024]` is a difference at `data.years`, not `data.years.1`.
 */
export function firstDifference(recorded: unknown, given: unknown, path: readonly string[] = []): JsonDifference | undefined {
  if (isObject(recorded) && isObject(given)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(given)])];
    for (const key of keys) {
      const found = firstDifference(recorded[key], given[key], [...path, key]);
      if (found) return found;
    }
    return undefined;
  }
  if (JSON.stringify(recorded ?? null) === JSON.stringify(given ?? null)) return undefined;
  return { key: path.join('.') || '(root)', recorded, given };
}
