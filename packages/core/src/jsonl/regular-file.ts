import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { AgentFlowError } from '../errors/agentflow-error';
import { formatByteCount } from '../http/read-limited-body';

/** What a path that is not a regular file is, for an error message: `a FIFO`, `a directory`, ... */
export function fileKindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'a special file';
}

function notRegular(path: string, what: string, stats: Stats, link: boolean): AgentFlowError {
  const kind = `${link ? 'a link to ' : ''}${fileKindOf(stats)}`;
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${path} is ${kind}; expected a regular file (${what}).`,
    details: { path, kind },
  });
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Settings of {@link openRegularFile}. */
export interface OpenRegularFileSettings {
  /** What the file is, for the error messages (`a JSONL file`). */
  what: string;
  /** Return undefined when the file does not exist instead of throwing NOT_FOUND. */
  allowMissing?: boolean;
}

/**
 * Opens `path` for reading when it is a regular file (a link is followed to its target), and
 * never blocks: the path is checked with lstat (and stat for a link) first, opened with
 * O_NONBLOCK (a FIFO put there meanwhile cannot block the open) and checked again on the
 * descriptor. A FIFO, device, socket or folder is INVALID_ARGUMENT naming what it is; a missing
 * file is NOT_FOUND (or undefined with `allowMissing`). The caller closes the descriptor.
 */
export function openRegularFile(path: string, settings: OpenRegularFileSettings): number | undefined {
  const { what } = settings;
  let stats: Stats;
  try {
    stats = lstatSync(path);
    if (stats.isSymbolicLink()) {
      const target = statSync(path);
      if (!target.isFile()) throw notRegular(path, what, target, true);
      stats = target;
    }
  } catch (error) {
    if (AgentFlowError.isInstance(error)) throw error;
    if (!isMissing(error)) throw error;
    if (settings.allowMissing) return undefined;
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `${what} not found: ${path}`, cause: error, details: { path } });
  }
  if (!stats.isFile()) throw notRegular(path, what, stats, false);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  const opened = fstatSync(fd);
  if (!opened.isFile()) {
    closeSync(fd);
    throw notRegular(path, what, opened, false);
  }
  return fd;
}

/**
 * The bytes of a small regular file (see {@link openRegularFile}), at most `maxBytes`; a larger
 * one is RECORD_TOO_LARGE naming the file, its size and the cap.
 */
export function readSmallRegularFile(path: string, maxBytes: number, settings: OpenRegularFileSettings): Buffer | undefined {
  const fd = openRegularFile(path, settings);
  if (fd === undefined) return undefined;
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) {
      throw new AgentFlowError({
        code: 'RECORD_TOO_LARGE',
        message: `${path} is ${formatByteCount(size)}; ${settings.what} is at most ${formatByteCount(maxBytes)}.`,
        details: { path, size, maxBytes },
      });
    }
    const buffer = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const read = readSync(fd, buffer, filled, size - filled, filled);
      if (read === 0) break; // shrank meanwhile
      filled += read;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}
