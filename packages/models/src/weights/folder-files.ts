import { lstatSync, readFileSync, realpathSync, type Stats, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';

/** Largest JSON file of a model folder read whole (config.json, the shard index of a 235B model is ~2 MB). */
export const MAX_FOLDER_JSON_BYTES = 64 * 1024 * 1024;

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  return 'a device or other special file';
}

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
  if (!stats.isFile()) throw refuse(`${path} is ${kindOf(stats)}; expected a regular file.`, { path });
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

/**
 * Reads and parses a JSON file of a model folder, refusing one over {@link MAX_FOLDER_JSON_BYTES}
 * or that is not UTF-8 before it is parsed.
 */
export function readFolderJson(path: string): unknown {
  const { size } = statSync(path);
  if (size > MAX_FOLDER_JSON_BYTES) {
    throw refuse(`${path} is ${size} bytes; a model folder's JSON file is at most ${MAX_FOLDER_JSON_BYTES}.`, { path, size });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(path));
  } catch (cause) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${path} is not UTF-8 text.`, cause, details: { path } });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${path} is not valid JSON: ${(cause as Error).message}`, cause, details: { path } });
  }
}
