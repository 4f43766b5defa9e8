import { ANY, type Frame, lexRemaining, latin1, type Stack, TERMINAL_NUMBER } from './json-frames';
import { minimumLength, memberLength, objectRemainder } from './schema-node';

/** Bytes of the shortest way to complete `stack` (additive over frames; exact for compact JSON). */
export function completionCost(stack: Stack | null): number {
  let total = 0;
  for (let current = stack; current; current = current.parent) total += frameCost(current.frame, current.parent);
  return total;
}

function frameCost(frame: Frame, parent: Stack | null): number {
  switch (frame.type) {
    case 'value':
      return minimumLength(frame.node);
    case 'string':
      return lexRemaining(frame.pending, frame.escape) + Math.max(0, frame.node.minLength - frame.count) + 1;
    case 'literal':
      return Math.min(...frame.texts.map((text) => text.length - frame.matched));
    case 'number':
      return TERMINAL_NUMBER.has(frame.phase) ? 0 : 1;
    case 'key': {
      // The key's remainder, '"', ':' and the cheapest value; the object frame below then adds
      // what it needs after that member (it is in phase 'colon' with no key yet).
      const object = parent!.frame as Extract<Frame, { type: 'object' }>;
      const options: number[] = [];
      for (const name of frame.candidates) {
        if (!latin1(name).startsWith(frame.buffer)) continue;
        options.push(latin1(name).length - frame.buffer.length + 2 + minimumLength(object.node.properties.get(name)!) + remainderWith(object, name) - remainderWith(object, undefined));
      }
      if (frame.free) options.push(lexRemaining(frame.pending, frame.escape) + 2 + minimumLength(object.node.additional ?? ANY));
      return Math.min(...options);
    }
    case 'object':
      switch (frame.phase) {
        case 'open':
          return objectRemainder(frame.node, new Set(frame.seen), true);
        case 'need-key': {
          const missing = objectRemainder(frame.node, new Set(frame.seen), true);
          if (missing > 1) return missing;
          // A comma was written, so one more member is due: the cheapest allowed one.
          const costs = [...frame.node.properties.keys()].filter((name) => !frame.seen.includes(name)).map((name) => memberLength(frame.node, name));
          if (frame.node.additional) costs.push(3 + minimumLength(frame.node.additional));
          return Math.min(...costs) + 1;
        }
        case 'key':
          return remainderWith(frame, undefined);
        case 'colon':
          return 1 + minimumLength((frame.key === undefined ? frame.node.additional : frame.node.properties.get(frame.key)) ?? ANY) + remainderWith(frame, frame.key);
        case 'value':
          return remainderWith(frame, frame.key);
        case 'after-value':
          return objectRemainder(frame.node, new Set(frame.seen), false);
      }
      return 0;
    case 'array': {
      const { minItems, items } = frame.node;
      const afterValue = (count: number) => Math.max(0, minItems - count) * (1 + minimumLength(items)) + 1;
      switch (frame.phase) {
        case 'open':
          return minItems === 0 ? 1 : minItems * minimumLength(items) + minItems - 1 + 1;
        case 'need-value':
          return minimumLength(items) + afterValue(frame.count + 1);
        case 'value':
          return afterValue(frame.count + 1);
        case 'after-value':
          return afterValue(frame.count);
      }
    }
  }
}

/** What an object needs after the member `key` (when given) is complete. */
function remainderWith(frame: Extract<Frame, { type: 'object' }>, key: string | undefined): number {
  const seen = new Set(frame.seen);
  if (key !== undefined) seen.add(key);
  return objectRemainder(frame.node, seen, false);
}


/** A string that identifies the stack's behaviour, for caches. */
export function stackKey(stack: Stack | null): string {
  if (!stack) return '#';
  if (stack.key !== undefined) return stack.key;
  const frame = stack.frame;
  let own: string;
  switch (frame.type) {
    case 'value':
      own = `v${nodeId(frame.node)}`;
      break;
    case 'string':
      own = `s${nodeId(frame.node)}.${frame.count}.${frame.pending}.${frame.escape}`;
      break;
    case 'literal':
      own = `l${frame.matched}:${frame.texts.map((text) => nodeId(text)).join(',')}`;
      break;
    case 'number':
      own = `n${frame.integer ? 'i' : 'f'}${frame.phase}`;
      break;
    case 'object':
      own = `o${nodeId(frame.node)}${frame.phase}[${frame.seen.join('\u0000')}]${frame.key ?? ''}`;
      break;
    case 'key': {
      // A free key's text matters only when it could name a declared property.
      const object = stack.parent?.frame as Extract<Frame, { type: 'object' }> | undefined;
      const buffer = frame.free && object && object.node.properties.size === 0 ? '*' : frame.buffer;
      own = `k${frame.free ? 'f' : ''}${frame.escape}.${frame.pending}${buffer}|${frame.candidates.join('\u0000')}`;
      break;
    }
    case 'array':
      own = `a${nodeId(frame.node)}${frame.phase}${Math.min(frame.count, Math.max(frame.node.minItems, Number.isFinite(frame.node.maxItems) ? frame.node.maxItems : 0))}`;
      break;
  }
  stack.key = `${own}/${stackKey(stack.parent)}`;
  return stack.key;
}

const nodeIds = new WeakMap<object, number>();
let nextNodeId = 0;
function nodeId(node: object): number {
  let id = nodeIds.get(node);
  if (id === undefined) {
    id = nextNodeId++;
    nodeIds.set(node, id);
  }
  return id;
}
