import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AgentFlowError, describeValue, fileKindOf } from '@agentflow/core';
import { type CountedJsonContainer, checkJsonStructure } from './json-structure';

/** Largest JSON file of a model folder read whole (config.json, the shard index of a 235B model is ~2 MB). */
export const MAX_FOLDER_JSON_BYTES = 64 * 1024 * 1024;

function refuse(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_ARGUMENT', message, details });
}

function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest !== '' && rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest);
}

/**
 * The path of `name` inside the model folder `dir`, checked before anything reads it: a
 * relative name that stays in the folder, naming a regular file (a symbolic link only when
 * its target is a regular file inside the folder). Undefined when nothing is there; a
 * directory, FIFO, socket or device where a file should be is refused, naming what it is.
 */
export function folderFile(dir: string, name: string): string | undefined {
  const root = resolve(dir);
  const path = resolve(root, name);
  if (isAbsolute(name) || !isInside(root, path)) {
    throw refuse(`${describeValue(name)} in model folder ${dir} leaves the folder; expected a file name inside it.`, { dir, name });
  }
  try {
    lstatSync(path);
  } catch {
    return undefined;
  }
  // Every component is resolved: a link anywhere on the path (the file, or a folder above it) may lead out.
  let target: string;
  try {
    target = realpathSync(path);
  } catch (cause) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `${path} is a symbolic link to nothing.`, cause, details: { path } });
  }
  if (!isInside(realpathSync(root), target)) {
    throw refuse(`${path} resolves to ${target}, outside the model folder ${dir}; copy the file into the folder.`, { path, target });
  }
  const stats = statSync(target);
  if (!stats.isFile()) throw refuse(`${path} is ${fileKindOf(stats)}; expected a regular file.`, { path });
  return path;
}

/** Like {@link folderFile}, for a file the folder must have; `what` says why in the error. */
export function requiredFolderFile(dir: string, name: string, what: string): string {
  const path = folderFile(dir, name);
  if (path === undefined) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `No ${name} in model folder ${dir}; ${what}.`,
      details: { dir, path: join(dir, name) },
    });
  }
  return path;
}

/** How deep a model folder's JSON file may nest (config.json nests 3 levels, tokenizer.json 6). */
export const MAX_FOLDER_JSON_DEPTH = 64;

/**
 * The offset of the first byte of `bytes` that does not start or continue a UTF-8 character
 * (overlong forms, surrogates and code points past U+10FFFF included), or -1 when all is UTF-8.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  for (let index = 0; index < bytes.length; ) {
    const lead = bytes[index] as number;
    if (lead < 0x80) {
      index++;
      continue;
    }
    const continuation = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 0;
    if (continuation === 0) return index;
    // The second byte's range excludes overlong forms (E0, F0), surrogates (ED) and past U+10FFFF (F4).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let next = 1; next <= continuation; next++) {
      const byte = bytes[index + next];
      if (byte === undefined || byte < (next === 1 ? low : 0x80) || byte > (next === 1 ? high : 0xbf)) return index + next;
    }
    index += continuation + 1;
  }
  return -1;
}

/**
 * Reads a file of a model folder (a path from {@link folderFile}) as UTF-8 text, refusing one
 * over `maxBytes` before reading it. `what` names the kind of file in the error ("a
 * tokenizer.json"). The file is opened without blocking and checked again once open, so a FIFO
 * or device swapped in after folderFile's check is refused rather than read.
 */
export function readFolderText(path: string, maxBytes: number, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (cause) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `Cannot open ${path}: ${(cause as Error).message}`, cause, details: { path } });
  }
  let bytes: Buffer;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw refuse(`${path} is ${fileKindOf(stats)}; expected a regular file.`, { path });
    if (stats.size > maxBytes) {
      throw refuse(`${path} is ${stats.size} bytes; ${what} is at most ${maxBytes} bytes (${formatMiB(maxBytes)}).`, { path, size: stats.size, maxBytes });
    }
    // At most the size seen once open: a file that grows meanwhile is read up to it.
    bytes = Buffer.allocUnsafe(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(fd, bytes, filled, bytes.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    bytes = bytes.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    const offset = invalidUtf8Offset(bytes);
    const byte = bytes[offset];
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `${path} is not UTF-8 text: the byte ${byte === undefined ? '(end of file)' : `0x${byte.toString(16).padStart(2, '0')}`} at offset ${offset} does not start or continue a UTF-8 character; save it as UTF-8.`,
      cause,
      details: { path, offset },
    });
  }
}

function formatMiB(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * Parses JSON text of a model folder's file, refusing text nested deeper than
 * {@link MAX_FOLDER_JSON_DEPTH} (code that walks the value recurses) or with more entries in a
 * `counted` container than its bound, before it is parsed.
 */
export function parseFolderJson(text: string, path: string, counted: readonly CountedJsonContainer[] = []): unknown {
  checkJsonStructure(text, path, { maxDepth: MAX_FOLDER_JSON_DEPTH, counted });
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${path} is not valid JSON: ${(cause as Error).message}`, cause, details: { path } });
  }
}

/**
 * Reads and parses a JSON file of a model folder, refusing one over {@link MAX_FOLDER_JSON_BYTES},
 * that is not UTF-8 or that nests deeper than {@link MAX_FOLDER_JSON_DEPTH} before it is parsed.
 */
export function readFolderJson(path: string): unknown {
  return parseFolderJson(readFolderText(path, MAX_FOLDER_JSON_BYTES, "a model folder's JSON file"), path);
}
