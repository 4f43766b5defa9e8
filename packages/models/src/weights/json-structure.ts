import { AgentFlowError } from '@agentflow/core';

/** A container of a JSON document whose entries are counted before it is parsed. */
export interface CountedJsonContainer {
  /** Object keys from the root (`['model', 'vocab']`; `[]` is the root itself). */
  path: readonly string[];
  /** Most entries (object members or array elements) it may hold. */
  max: number;
  /** What the bound is, for the error: "a token id bound of 151936 (config.json's vocab_size)". */
  bound: string;
}

/** What {@link checkJsonStructure} checks. */
export interface JsonStructureSettings {
  /** Deepest nesting of `[` and `{` allowed. */
  maxDepth: number;
  /** Containers whose entries are counted, with their bounds. */
  counted?: readonly CountedJsonContainer[];
}

interface Frame {
  isObject: boolean;
  /** Keys from the root, while the frame is shallow enough to be counted; null below. */
  path: string[] | null;
  key: string;
  expectKey: boolean;
  /** Members of an object; commas of an array (elements - 1 once it has one). */
  count: number;
  limit: CountedJsonContainer | undefined;
}

const QUOTE = 34;
const BACKSLASH = 92;

function samePath(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((key, index) => key === right[index]);
}

/**
 * Checks the shape of JSON text in one pass before it is parsed, so that a document too deep
 * for code that recurses over it, or a vocabulary of millions of entries that would take
 * JSON.parse seconds and hundreds of MB, is refused in milliseconds. Strings are skipped whole;
 * the text need not be valid JSON (JSON.parse reports that afterwards).
 */
export function checkJsonStructure(text: string, file: string, settings: JsonStructureSettings): void {
  const counted = settings.counted ?? [];
  const longest = counted.reduce((most, container) => Math.max(most, container.path.length), -1);
  const stack: Frame[] = [];
  // Numbers, literals and white space are skipped by the regular expression, strings by indexOf.
  const structural = /["{}[\]:,]/g;
  for (let match = structural.exec(text); match !== null; match = structural.exec(text)) {
    const index = match.index;
    const code = text.charCodeAt(index);
    const top = stack[stack.length - 1];
    if (code === QUOTE) {
      let end = index + 1;
      for (;;) {
        end = text.indexOf('"', end);
        if (end < 0) return; // unterminated: JSON.parse says so
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        end++;
      }
      if (top?.isObject && top.expectKey) {
        top.expectKey = false;
        // Only keys on a counted path are decoded; a malformed one is JSON.parse's to report.
        if (top.path !== null && top.path.length < longest) {
          try {
            top.key = JSON.parse(text.slice(index, end + 1)) as string;
          } catch {
            return;
          }
        }
      }
      structural.lastIndex = end + 1;
    } else if (code === 123 || code === 91) {
      // { or [
      if (stack.length >= settings.maxDepth) {
        throw new AgentFlowError({
          code: 'PARSE_ERROR',
          message: `${file} nests lists and objects more than ${settings.maxDepth} levels deep (at character ${index}); a model folder's JSON nests a few levels.`,
          details: { path: file, maxDepth: settings.maxDepth, offset: index },
        });
      }
      let path: string[] | null = null;
      if (top === undefined) path = [];
      else if (top.path !== null && top.path.length < longest) path = [...top.path, top.isObject ? top.key : '[]'];
      const limit = path === null ? undefined : counted.find((container) => samePath(container.path, path));
      stack.push({ isObject: code === 123, path, key: '', expectKey: code === 123, count: 0, limit });
    } else if (code === 125 || code === 93) {
      // } or ]
      stack.pop();
    } else if (top !== undefined && (code === 58 || code === 44)) {
      // : counts an object member; , an array element (its count is commas + 1) or the next key.
      if (code === 44 && top.isObject) {
        top.expectKey = true;
        continue;
      }
      top.count++;
      const entries = top.isObject ? top.count : top.count + 1;
      if (top.limit !== undefined && entries > top.limit.max) {
        const name = top.limit.path.length === 0 ? 'the top-level value' : top.limit.path.join('.');
        throw new AgentFlowError({
          code: 'INVALID_CONFIG',
          message: `${file}: ${name} has more than ${top.limit.max} entries; expected at most ${top.limit.max}, ${top.limit.bound}.`,
          details: { path: file, key: name, max: top.limit.max },
        });
      }
    }
  }
}
