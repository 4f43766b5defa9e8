/** Frames, byte classes and the string lexer of the JSON automaton. */
import type { SchemaNode } from './schema-node';

export type ObjectNode = Extract<SchemaNode, { kind: 'object' }>;
export type ArrayNode = Extract<SchemaNode, { kind: 'array' }>;

/**
 * One frame of the pushdown automaton that reads compact JSON byte by byte. Frames are immutable;
 * a stack is a linked list, so states share their tails and can be kept in caches.
 */
export type Frame =
  | { type: 'value'; node: SchemaNode }
  | { type: 'string'; node: { minLength: number; maxLength: number }; count: number; pending: number; escape: Escape }
  | { type: 'literal'; texts: Uint8Array[]; matched: number }
  | { type: 'number'; integer: boolean; phase: NumberPhase }
  | {
      type: 'object';
      node: ObjectNode;
      seen: readonly string[];
      phase: 'open' | 'need-key' | 'key' | 'colon' | 'value' | 'after-value';
      /** The declared property being written; undefined for an additional one. */
      key: string | undefined;
    }
  | { type: 'key'; candidates: readonly string[]; free: boolean; buffer: string; pending: number; escape: Escape }
  | { type: 'array'; node: ArrayNode; count: number; phase: 'open' | 'need-value' | 'value' | 'after-value' };

/** Inside a string: 0 none, 1 after a backslash, 2..5 reading the 4 hex digits of \u. */
export type Escape = 0 | 1 | 2 | 3 | 4 | 5;

export type NumberPhase = 'sign' | 'zero' | 'integer' | 'dot' | 'fraction' | 'exponent-mark' | 'exponent-sign' | 'exponent';

/** A stack of frames (top first); `null` is the empty stack: the value is complete. */
export interface Stack {
  readonly frame: Frame;
  readonly parent: Stack | null;
  key?: string;
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
export const isHex = (byte: number) => isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46);
export const TERMINAL_NUMBER: ReadonlySet<NumberPhase> = new Set(['zero', 'integer', 'fraction', 'exponent']);
export const ESCAPABLE = new Set([...'"\\/bfnrtu'].map((character) => character.charCodeAt(0)));

export const push = (frame: Frame, parent: Stack | null): Stack => ({ frame, parent });

export const encoder = new TextEncoder();
export const ANY: SchemaNode = { kind: 'any' };
export const ANY_OBJECT: ObjectNode = { kind: 'object', properties: new Map(), required: [], additional: ANY };
export const ANY_ARRAY: ArrayNode = { kind: 'array', items: ANY, minItems: 0, maxItems: Number.POSITIVE_INFINITY };
export const ANY_STRING = { minLength: 0, maxLength: Number.POSITIVE_INFINITY };
export const ANY_LITERALS = ['true', 'false', 'null'].map((text) => encoder.encode(text));

/**
 * One byte of string content (shared by values and keys): 'close' for the closing quote, null for
 * a byte JSON forbids here (raw control characters, bad escapes, invalid UTF-8), else the next
 * escape/UTF-8 state and whether a character was completed.
 */
export function lexStringByte(pending: number, escaped: Escape, byte: number): 'close' | null | { pending: number; escape: Escape; completed: boolean } {
  if (pending > 0) return byte >= 0x80 && byte <= 0xbf ? { pending: pending - 1, escape: 0, completed: pending === 1 } : null;
  if (escaped === 1) {
    if (!ESCAPABLE.has(byte)) return null;
    return byte === 0x75 ? { pending: 0, escape: 2, completed: false } : { pending: 0, escape: 0, completed: true };
  }
  if (escaped >= 2) {
    if (!isHex(byte)) return null;
    return escaped === 5 ? { pending: 0, escape: 0, completed: true } : { pending: 0, escape: (escaped + 1) as Escape, completed: false };
  }
  if (byte === QUOTE) return 'close';
  if (byte < 0x20 || byte === 0x7f) return null; // control characters must be escaped
  if (byte === BACKSLASH) return { pending: 0, escape: 1, completed: false };
  if (byte < 0x80) return { pending: 0, escape: 0, completed: true };
  if (byte >= 0xc2 && byte <= 0xdf) return { pending: 1, escape: 0, completed: false };
  if (byte >= 0xe0 && byte <= 0xef) return { pending: 2, escape: 0, completed: false };
  if (byte >= 0xf0 && byte <= 0xf4) return { pending: 3, escape: 0, completed: false };
  return null;
}

/** Bytes needed to finish a pending escape or UTF-8 character. */
export const lexRemaining = (pending: number, escaped: Escape) => pending + (escaped === 1 ? 1 : escaped >= 2 ? 6 - escaped : 0);

/** A property name as the bytes of its JSON encoding (without quotes), one char per byte. */
const latin1Cache = new Map<string, string>();
export function latin1(name: string): string {
  let cached = latin1Cache.get(name);
  if (cached === undefined) {
    const encoded = encoder.encode(JSON.stringify(name).slice(1, -1));
    cached = String.fromCharCode(...encoded);
    latin1Cache.set(name, cached);
  }
  return cached;
}

/** Bytes that a JSON string may hold as they are: no quote, backslash or control byte, whole UTF-8 characters. */
export function isPlainStringToken(bytes: Uint8Array): boolean {
  let pending = 0;
  for (const byte of bytes) {
    if (pending > 0) {
      if (byte < 0x80 || byte > 0xbf) return false;
      pending--;
      continue;
    }
    if (byte === QUOTE || byte === BACKSLASH || byte < 0x20 || byte === 0x7f) return false;
    if (byte >= 0x80) {
      if (byte >= 0xc2 && byte <= 0xdf) pending = 1;
      else if (byte >= 0xe0 && byte <= 0xef) pending = 2;
      else if (byte >= 0xf0 && byte <= 0xf4) pending = 3;
      else return false;
    }
  }
  return pending === 0 && bytes.length > 0;
}


/** Characters in UTF-8 bytes: the bytes that are not continuation bytes. */
export function utf8CharacterCount(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes) if (byte < 0x80 || byte > 0xbf) count++;
  return count;
}
