import { readFileSync, type Stats, statSync } from 'node:fs';
import { AgentFlowError } from '../errors/agentflow-error';
import { fileKindOf } from '../jsonl/regular-file';
import { firstInvalidUtf8Byte, lineOfByte } from '../text/first-invalid-utf8';

/** Largest config file {@link readConfigText} reads: a config is a few kilobytes. */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** Deepest nesting of lists and objects a config may have: a config nests a few levels. */
export const MAX_CONFIG_DEPTH = 64;

function invalid(message: string, path: string): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_CONFIG', message, details: { path } });
}

/**
 * The text of a config file, checked before it is parsed: a regular file (not a directory or a
 * FIFO, which would block), at most {@link MAX_CONFIG_BYTES}, and UTF-8 (a byte that is not is an
 * error naming its offset and line, never a replacement character in a value).
 */
export function readConfigText(path: string): string {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    throw invalid(`${path}: config file not found.`, path);
  }
  if (!stats.isFile()) throw invalid(`${path}: is ${fileKindOf(stats)}; expected a YAML or JSON config file.`, path);
  if (stats.size > MAX_CONFIG_BYTES) {
    throw invalid(`${path}: is ${stats.size} bytes; a config file is at most ${MAX_CONFIG_BYTES} bytes.`, path);
  }
  const bytes = readFileSync(path);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8Byte(bytes);
    throw invalid(
      `${path}: not UTF-8 text: byte 0x${bytes[offset]!.toString(16).padStart(2, '0')} at offset ${offset} (line ${lineOfByte(bytes, offset)}); save the file as UTF-8.`,
      path,
    );
  }
}

/**
 * Refuses text whose `[` / `{` nest deeper than {@link MAX_CONFIG_DEPTH}, before a parser
 * recurses into it (a 100,000-deep list overflows the stack). Quoted strings and YAML comments
 * are skipped; a bracket inside a plain YAML scalar counts, which can only over-count.
 */
export function checkTextNesting(text: string, where: string): void {
  let depth = 0;
  let line = 1;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\n') line++;
    else if (char === '"' || char === "'") {
      // Skip to the closing quote; a backslash escapes in double quotes, '' is a quote in single ones.
      for (index++; index < text.length && text[index] !== char; index++) {
        if (text[index] === '\n') line++;
        if (char === '"' && text[index] === '\\') index++;
      }
    } else if (char === '#' && (index === 0 || /\s/.test(text[index - 1]!))) {
      while (index + 1 < text.length && text[index + 1] !== '\n') index++;
    } else if (char === '[' || char === '{') {
      if (++depth > MAX_CONFIG_DEPTH) {
        throw new AgentFlowError({
          code: 'INVALID_CONFIG',
          message: `${where}: lists and objects nest more than ${MAX_CONFIG_DEPTH} levels deep (line ${line}); a config nests a few levels.`,
          details: { where, line },
        });
      }
    } else if (char === ']' || char === '}') depth = Math.max(0, depth - 1);
  }
}

/**
 * Refuses a parsed value nested deeper than {@link MAX_CONFIG_DEPTH} (YAML's indented blocks
 * nest without brackets), iteratively, before anything recurses into it.
 */
export function checkValueDepth(value: unknown, where: string): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    if (depth >= MAX_CONFIG_DEPTH) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `${where}: lists and objects nest more than ${MAX_CONFIG_DEPTH} levels deep; a config nests a few levels.`,
        details: { where },
      });
    }
    seen.add(node);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}
