import {
  ANY,
  ANY_ARRAY,
  ANY_LITERALS,
  ANY_OBJECT,
  ANY_STRING,
  type Frame,
  isDigit,
  lexStringByte,
  latin1,
  type NumberPhase,
  push,
  QUOTE,
  type Stack,
  TERMINAL_NUMBER,
} from './json-frames';
import type { SchemaNode } from './schema-node';

export type { Stack } from './json-frames';
export { isPlainStringToken } from './json-frames';
export { completionCost, stackKey } from './json-cost';

/** The stack that starts a value of `node`. */
export function initialStack(node: SchemaNode): Stack {
  return push({ type: 'value', node }, null);
}

/** The parent after its child value completed. */
function completeChild(parent: Stack | null): Stack | null {
  if (!parent) return null;
  const frame = parent.frame;
  if (frame.type === 'object') {
    // Only declared names are remembered: they decide `required` and duplicates; a record's keys
    // would make every state distinct.
    const seen = frame.key === undefined ? frame.seen : [...frame.seen, frame.key].sort();
    return push({ ...frame, seen, phase: 'after-value', key: undefined }, parent.parent);
  }
  if (frame.type === 'array') return push({ ...frame, count: frame.count + 1, phase: 'after-value' }, parent.parent);
  return parent;
}

function canAddKey(frame: Extract<Frame, { type: 'object' }>): boolean {
  return frame.node.additional !== null || [...frame.node.properties.keys()].some((name) => !frame.seen.includes(name));
}

function startKey(frame: Extract<Frame, { type: 'object' }>, parent: Stack | null): Stack {
  const objectStack = push({ ...frame, phase: 'key', key: undefined }, parent);
  const candidates = [...frame.node.properties.keys()].filter((name) => !frame.seen.includes(name));
  return push({ type: 'key', candidates, free: frame.node.additional !== null, buffer: '', pending: 0, escape: 0 }, objectStack);
}

/** Starts a value of `node` with `byte`; several stacks when `node` is a union. */
function startValue(node: SchemaNode, byte: number, parent: Stack | null, out: (Stack | null)[]): void {
  switch (node.kind) {
    case 'union':
      for (const option of node.options) startValue(option, byte, parent, out);
      return;
    case 'any':
      if (byte === QUOTE) out.push(push({ type: 'string', node: ANY_STRING, count: 0, pending: 0, escape: 0 }, parent));
      else if (byte === 0x7b) out.push(push({ type: 'object', node: ANY_OBJECT, seen: [], phase: 'open', key: undefined }, parent));
      else if (byte === 0x5b) out.push(push({ type: 'array', node: ANY_ARRAY, count: 0, phase: 'open' }, parent));
      else if (byte === 0x2d || isDigit(byte)) stepNumber({ type: 'number', integer: false, phase: 'sign' }, byte, parent, out, true);
      else stepLiteral({ type: 'literal', texts: ANY_LITERALS, matched: 0 }, byte, parent, out);
      return;
    case 'string':
      if (byte === QUOTE) out.push(push({ type: 'string', node, count: 0, pending: 0, escape: 0 }, parent));
      return;
    case 'number':
      if (byte === 0x2d || isDigit(byte)) stepNumber({ type: 'number', integer: node.integer, phase: 'sign' }, byte, parent, out, true);
      return;
    case 'literal':
      stepLiteral({ type: 'literal', texts: node.texts, matched: 0 }, byte, parent, out);
      return;
    case 'object':
      if (byte === 0x7b) out.push(push({ type: 'object', node, seen: [], phase: 'open', key: undefined }, parent));
      return;
    case 'array':
      if (byte === 0x5b) out.push(push({ type: 'array', node, count: 0, phase: 'open' }, parent));
      return;
  }
}


function stepLiteral(frame: Extract<Frame, { type: 'literal' }>, byte: number, parent: Stack | null, out: (Stack | null)[]): void {
  const texts = frame.texts.filter((text) => text[frame.matched] === byte);
  if (texts.length === 0) return;
  const matched = frame.matched + 1;
  if (texts.some((text) => text.length === matched)) out.push(completeChild(parent));
  const longer = texts.filter((text) => text.length > matched);
  if (longer.length > 0) out.push(push({ type: 'literal', texts: longer, matched }, parent));
}

/** RFC 8259's number grammar: the next phase after `byte`, or undefined when the number cannot take it. */
function numberTransition(phase: NumberPhase, byte: number, integer: boolean): NumberPhase | undefined {
  const digit = isDigit(byte);
  switch (phase) {
    case 'sign':
      return byte === 0x30 ? 'zero' : digit ? 'integer' : undefined;
    case 'dot':
      return digit ? 'fraction' : undefined;
    case 'exponent-mark':
      return byte === 0x2b || byte === 0x2d ? 'exponent-sign' : digit ? 'exponent' : undefined;
    case 'exponent-sign':
    case 'exponent':
      return digit ? 'exponent' : undefined;
    case 'integer':
    case 'fraction':
      if (digit) return phase;
      break;
    case 'zero':
      break;
  }
  if (integer) return undefined;
  if (byte === 0x2e && phase !== 'fraction') return 'dot';
  return byte === 0x65 || byte === 0x45 ? 'exponent-mark' : undefined;
}

/** One byte of a number; `fresh` marks its first byte. When the number ends, the byte goes to the parent. */
function stepNumber(frame: Extract<Frame, { type: 'number' }>, byte: number, parent: Stack | null, out: (Stack | null)[], fresh = false): void {
  const phase = fresh
    ? byte === 0x2d
      ? 'sign'
      : byte === 0x30
        ? 'zero'
        : isDigit(byte)
          ? 'integer'
          : undefined
    : numberTransition(frame.phase, byte, frame.integer);
  if (phase) {
    out.push(push({ ...frame, phase }, parent));
    return;
  }
  if (fresh || !TERMINAL_NUMBER.has(frame.phase)) return;
  const after = completeChild(parent);
  if (after) for (const stack of step(after, byte)) out.push(stack);
}

function stepString(frame: Extract<Frame, { type: 'string' }>, byte: number, parent: Stack | null, out: (Stack | null)[]): void {
  const lexed = lexStringByte(frame.pending, frame.escape, byte);
  if (lexed === null) return;
  if (lexed === 'close') {
    if (frame.count >= frame.node.minLength) out.push(completeChild(parent));
    return;
  }
  // A new character starts with this byte unless it continues an escape or a UTF-8 sequence.
  const starts = frame.pending === 0 && frame.escape === 0;
  if (starts && frame.count >= frame.node.maxLength) return;
  const cap = Math.max(frame.node.minLength, Number.isFinite(frame.node.maxLength) ? frame.node.maxLength : 0);
  const count = starts ? Math.min(frame.count + 1, cap) : frame.count;
  out.push(push({ ...frame, pending: lexed.pending, escape: lexed.escape, count }, parent));
}

function stepKey(frame: Extract<Frame, { type: 'key' }>, byte: number, parent: Stack, out: (Stack | null)[]): void {
  const object = parent.frame as Extract<Frame, { type: 'object' }>;
  const lexed = lexStringByte(frame.pending, frame.escape, byte);
  if (lexed === null) return;
  if (lexed === 'close') {
    const declared = [...object.node.properties.keys()].find((name) => latin1(name) === frame.buffer);
    if (declared !== undefined && object.seen.includes(declared)) return;
    if (declared === undefined && !frame.free) return;
    out.push(push({ ...object, phase: 'colon', key: declared }, parent.parent));
    return;
  }
  const buffer = frame.buffer + String.fromCharCode(byte); // raw bytes as Latin-1: compared against encoded names
  if (!frame.free) {
    const candidates = frame.candidates.filter((name) => latin1(name).startsWith(buffer));
    if (candidates.length === 0) return;
    out.push(push({ ...frame, candidates, buffer, pending: lexed.pending, escape: lexed.escape }, parent));
    return;
  }
  out.push(push({ ...frame, buffer, pending: lexed.pending, escape: lexed.escape }, parent));
}


function stepObject(frame: Extract<Frame, { type: 'object' }>, byte: number, parent: Stack | null, out: (Stack | null)[]): void {
  const requiredDone = frame.node.required.every((name) => frame.seen.includes(name));
  switch (frame.phase) {
    case 'open':
      if (byte === 0x7d && requiredDone) out.push(completeChild(parent));
      else if (byte === QUOTE && canAddKey(frame)) out.push(startKey(frame, parent));
      return;
    case 'need-key':
      if (byte === QUOTE) out.push(startKey(frame, parent));
      return;
    case 'colon':
      if (byte === 0x3a) {
        const node = (frame.key === undefined ? frame.node.additional : frame.node.properties.get(frame.key)) ?? ANY;
        out.push(push({ type: 'value', node }, push({ ...frame, phase: 'value' }, parent)));
      }
      return;
    case 'after-value':
      if (byte === 0x7d && requiredDone) out.push(completeChild(parent));
      else if (byte === 0x2c && canAddKey(frame)) out.push(push({ ...frame, phase: 'need-key' }, parent));
      return;
    case 'key':
    case 'value':
      return;
  }
}

function stepArray(frame: Extract<Frame, { type: 'array' }>, byte: number, parent: Stack | null, out: (Stack | null)[]): void {
  const self = (phase: Extract<Frame, { type: 'array' }>['phase']) => push({ ...frame, phase }, parent);
  switch (frame.phase) {
    case 'open':
      if (byte === 0x5d && frame.node.minItems === 0) out.push(completeChild(parent));
      else if (frame.node.maxItems > 0) startValue(frame.node.items, byte, self('value'), out);
      return;
    case 'need-value':
      startValue(frame.node.items, byte, self('value'), out);
      return;
    case 'after-value':
      if (byte === 0x5d && frame.count >= frame.node.minItems) out.push(completeChild(parent));
      else if (byte === 0x2c && frame.count < frame.node.maxItems) out.push(self('need-value'));
      return;
    case 'value':
      return;
  }
}

/** Every stack reachable from `stack` by reading `byte` (empty: the byte is not allowed). */
export function step(stack: Stack | null, byte: number): (Stack | null)[] {
  if (!stack) return [];
  const out: (Stack | null)[] = [];
  const { frame, parent } = stack;
  switch (frame.type) {
    case 'value':
      startValue(frame.node, byte, parent, out);
      break;
    case 'string':
      stepString(frame, byte, parent, out);
      break;
    case 'literal':
      stepLiteral(frame, byte, parent, out);
      break;
    case 'number':
      stepNumber(frame, byte, parent, out);
      break;
    case 'object':
      stepObject(frame, byte, parent, out);
      break;
    case 'key':
      stepKey(frame, byte, parent!, out);
      break;
    case 'array':
      stepArray(frame, byte, parent, out);
      break;
  }
  return out;
}

/** True when the bytes read so far form a complete value (nothing more is needed). */
export function isComplete(stack: Stack | null): boolean {
  if (!stack) return true;
  const { frame, parent } = stack;
  return frame.type === 'number' && TERMINAL_NUMBER.has(frame.phase) && completeChild(parent) === null;
}

/**
 * Inside string content with nothing pending, a plain token (see {@link isPlainStringToken}) of k
 * characters only moves the string's character count, so constraints can price every plain token
 * without walking its bytes. Returns, for such a stack, the change of the completion cost after k
 * characters (0 or less: they may satisfy minLength), or undefined when k would pass maxLength;
 * returns undefined for any other stack.
 */
export function plainStringCostChange(stack: Stack | null): ((characters: number) => number | undefined) | undefined {
  if (stack?.frame.type !== 'string') return undefined;
  const frame = stack.frame;
  if (frame.pending !== 0 || frame.escape !== 0) return undefined;
  const { minLength, maxLength } = frame.node;
  // The same cap as stepString: counts past both bounds are not told apart.
  const cap = Math.max(minLength, Number.isFinite(maxLength) ? maxLength : 0);
  const deficit = Math.max(0, minLength - frame.count);
  return (characters) => {
    if (frame.count + characters > maxLength) return undefined;
    return Math.max(0, minLength - Math.min(frame.count + characters, cap)) - deficit;
  };
}
