import type { z } from 'zod';
import { formatZodIssues } from '../errors/format-zod-issues';

/** What {@link parseModelReply} returns: the typed value, or the real problems; and the keys it dropped either way. */
export type ModelReplyResult<T> =
  | {
      ok: true;
      value: T;
      /** Dotted paths of the keys the schema does not name, dropped before validating (`analysis`, `action_input.extra`). */
      droppedKeys: string[];
    }
  | {
      ok: false;
      /** The problems left once unknown keys are dropped (missing, ill-typed, out-of-range fields), as `path: message; ...`. */
      error: string;
      droppedKeys: string[];
    };

// One round drops every unknown key zod reports; a second is needed only when dropping keys
// changes which union branch matches. The bound keeps a pathological schema from looping.
const MAX_ROUNDS = 8;

type Container = Record<PropertyKey, unknown>;

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/**
 * A copy of `root` without the keys of the `unrecognized_keys` issues, copying only the
 * objects and arrays on the way to each key (the input is never changed), and the dotted
 * paths of the keys actually removed.
 */
function withoutKeys(root: unknown, issues: readonly z.core.$ZodIssueUnrecognizedKeys[]): { value: unknown; dropped: string[] } {
  const copies = new WeakSet<object>();
  const own = (value: Container): Container => {
    if (copies.has(value)) return value;
    const copy: Container = Array.isArray(value) ? Object.assign([], value) : { ...value };
    copies.add(copy);
    return copy;
  };
  if (!isContainer(root)) return { value: root, dropped: [] };
  const value = own(root);
  const dropped: string[] = [];
  for (const issue of issues) {
    let parent: Container | undefined = value;
    for (const segment of issue.path) {
      const child: unknown = parent[segment];
      if (!isContainer(child)) {
        parent = undefined;
        break;
      }
      const copy = own(child);
      parent[segment] = copy;
      parent = copy;
    }
    if (parent === undefined || Array.isArray(parent)) continue;
    for (const key of issue.keys) {
      if (!Object.hasOwn(parent, key)) continue;
      delete parent[key];
      dropped.push(joinPath([...issue.path, key]));
    }
  }
  return { value, dropped };
}

/**
 * Validates a structured model reply (parsed JSON) against `schema` by the one tolerant
 * rule every model-facing parser in AgentFlow shares: keys the schema does not name are
 * dropped (at any depth, from a copy) and reported in `droppedKeys`, while required fields
 * keep their types and ranges (a score of 1.5 is still refused). `schema` is typically
 * `.strict()`, the same one whose JSON schema is sent for constrained decoding, so what the
 * model is asked for stays closed and only what is accepted is lenient: models in JSON mode
 * (DeepSeek's json_object enforces JSON, not a schema) add keys such as `analysis`.
 * A union whose branches tie on unknown keys stays an error: which keys to drop is ambiguous.
 */
export function parseModelReply<T>(schema: z.ZodType<T>, candidate: unknown): ModelReplyResult<T> {
  const droppedKeys: string[] = [];
  let current = candidate;
  for (let round = 0; ; round++) {
    const parsed = schema.safeParse(current);
    if (parsed.success) return { ok: true, value: parsed.data, droppedKeys };
    const unrecognized = parsed.error.issues.filter(
      (issue): issue is z.core.$ZodIssueUnrecognizedKeys => issue.code === 'unrecognized_keys',
    );
    const next = round < MAX_ROUNDS && unrecognized.length > 0 ? withoutKeys(current, unrecognized) : undefined;
    // Nothing left to drop: what zod still reports are the real problems.
    if (next === undefined || next.dropped.length === 0) {
      return { ok: false, error: formatZodIssues(parsed.error).join('; '), droppedKeys };
    }
    droppedKeys.push(...next.dropped);
    current = next.value;
  }
}
