import { AgentFlowError, describeValue } from '@agentflow/core';

/** A JSON schema compiled to the few shapes the decoding automaton knows. */
export type SchemaNode =
  | { kind: 'any' }
  | { kind: 'string'; minLength: number; maxLength: number }
  | { kind: 'number'; integer: boolean }
  | { kind: 'literal'; texts: Uint8Array[] }
  | {
      kind: 'object';
      properties: Map<string, SchemaNode>;
      required: string[];
      /** Schema of keys not in `properties`; null forbids them. */
      additional: SchemaNode | null;
    }
  | { kind: 'array'; items: SchemaNode; minItems: number; maxItems: number }
  | { kind: 'union'; options: SchemaNode[] };

const encoder = new TextEncoder();
const ANY: SchemaNode = { kind: 'any' };

function unsupported(what: string, schema: unknown): AgentFlowError {
  return new AgentFlowError({
    code: 'NOT_IMPLEMENTED',
    message: `Constrained decoding does not support ${what} (in ${describeValue(schema, 120)}).`,
    details: { schema },
  });
}

/** Literal JSON texts (compact, as JSON.stringify writes them) of enum/const values. */
function literal(values: unknown[]): SchemaNode {
  return { kind: 'literal', texts: values.map((value) => encoder.encode(JSON.stringify(value))) };
}

/**
 * Compiles a JSON schema (as `z.toJSONSchema` writes it: type, properties, required,
 * additionalProperties, items, enum, const, anyOf/oneOf, local $ref) to a {@link SchemaNode}.
 */
export function compileJsonSchema(schema: Record<string, unknown>): SchemaNode {
  const definitions = (schema.$defs ?? schema.definitions ?? {}) as Record<string, Record<string, unknown>>;
  const compile = (node: unknown, depth: number): SchemaNode => {
    if (depth > 64) throw unsupported('recursive schemas', node);
    if (node === true || node === undefined) return ANY;
    if (node === false) throw unsupported('the schema false', node);
    if (typeof node !== 'object' || node === null) throw unsupported('a non-object schema', node);
    const s = node as Record<string, unknown>;
    if (typeof s.$ref === 'string') {
      const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(s.$ref);
      const target = match ? definitions[match[1]!] : s.$ref === '#' ? schema : undefined;
      if (!target) throw unsupported(`the reference ${s.$ref}`, node);
      return compile(target, depth + 1);
    }
    if ('const' in s) return literal([s.const]);
    if (Array.isArray(s.enum)) return literal(s.enum);
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (Array.isArray(alternatives)) return { kind: 'union', options: alternatives.map((option) => compile(option, depth + 1)) };
    if (Array.isArray(s.allOf)) {
      if (s.allOf.length === 1) return compile(s.allOf[0], depth + 1);
      throw unsupported('allOf with several schemas', node);
    }
    if (Array.isArray(s.type)) {
      return { kind: 'union', options: s.type.map((type) => compile({ ...s, type }, depth + 1)) };
    }
    switch (s.type) {
      case undefined:
        return ANY;
      case 'string':
        return {
          kind: 'string',
          minLength: typeof s.minLength === 'number' ? s.minLength : 0,
          maxLength: typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY,
        };
      case 'number':
      case 'integer':
        return { kind: 'number', integer: s.type === 'integer' };
      case 'boolean':
        return literal([true, false]);
      case 'null':
        return literal([null]);
      case 'array':
        return {
          kind: 'array',
          items: compile(s.items, depth + 1),
          minItems: typeof s.minItems === 'number' ? s.minItems : 0,
          maxItems: typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY,
        };
      case 'object': {
        const properties = new Map<string, SchemaNode>();
        for (const [name, child] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
          properties.set(name, compile(child, depth + 1));
        }
        const additional =
          s.additionalProperties === false ? null : compile(s.additionalProperties === true ? undefined : s.additionalProperties, depth + 1);
        return { kind: 'object', properties, required: ((s.required ?? []) as string[]).filter((name) => typeof name === 'string'), additional };
      }
      default:
        throw unsupported(`type ${JSON.stringify(s.type)}`, node);
    }
  };
  return compile(schema, 0);
}

const minimumLengths = new WeakMap<SchemaNode, number>();

/** Bytes of the shortest JSON text valid under `node` (compact, ASCII). */
export function minimumLength(node: SchemaNode): number {
  let length = minimumLengths.get(node);
  if (length === undefined) {
    length = computeMinimumLength(node);
    minimumLengths.set(node, length);
  }
  return length;
}

function computeMinimumLength(node: SchemaNode): number {
  switch (node.kind) {
    case 'any':
    case 'number':
      return 1;
    case 'string':
      return 2 + node.minLength;
    case 'literal':
      return Math.min(...node.texts.map((text) => text.length));
    case 'array':
      return node.minItems === 0 ? 2 : 2 + node.minItems * minimumLength(node.items) + node.minItems - 1;
    case 'union':
      return Math.min(...node.options.map(minimumLength));
    case 'object':
      return 1 + objectRemainder(node, new Set(), true);
  }
}

/** Encoded key length (with quotes) + ':' + the shortest value, for one property. */
export function memberLength(node: Extract<SchemaNode, { kind: 'object' }>, name: string): number {
  const value = node.properties.get(name) ?? node.additional ?? ANY;
  return encoder.encode(JSON.stringify(name)).length + 1 + minimumLength(value);
}

/**
 * Bytes still needed to close an object whose members `seen` are written: the missing required
 * members (each preceded by ',' unless `first`) and the closing brace.
 */
export function objectRemainder(node: Extract<SchemaNode, { kind: 'object' }>, seen: ReadonlySet<string>, first: boolean): number {
  let total = 1;
  let isFirst = first;
  for (const name of node.required) {
    if (seen.has(name)) continue;
    total += memberLength(node, name) + (isFirst ? 0 : 1);
    isFirst = false;
  }
  return total;
}
