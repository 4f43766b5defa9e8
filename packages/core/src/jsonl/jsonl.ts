import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { AgentFlowError } from '../errors/agentflow-error';
import { firstInvalidUtf8Byte } from '../text/first-invalid-utf8';
import { diskFullError, isDiskFullError } from './disk-full';
import { forEachLine } from './jsonl-lines';
import { openRegularFile } from './regular-file';
import { writeAllSync } from './write-file-atomic';

// Kept importable from here, where it lived before it got its own file.
export { writeFileAtomic } from './write-file-atomic';

/** Default cap on one line of a JSONL file ({@link ReadJsonlSettings.maxLineBytes}): 16 MiB, far above any record a run writes. */
export const DEFAULT_MAX_JSONL_LINE_BYTES = 16 * 1024 * 1024;

/** Default cap on how deep a record nests lists and objects ({@link ReadJsonlSettings.maxDepth}): a run's records nest a few levels. */
export const DEFAULT_MAX_JSONL_DEPTH = 512;

/**
 * Appends records as JSON lines in one write, after cutting off any partial last line
 * that a crash left behind, then fsyncs. A reader therefore sees whole records only.
 * A full device (ENOSPC, EDQUOT) is DISK_FULL: what was written of the new records is cut off
 * again, and the records already in the file are intact.
 */
export function appendJsonl(path: string, records: readonly unknown[]): void {
  if (records.length === 0) return;
  const payload = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''), 'utf8');
  let end = -1;
  let fd: number | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${path} is not a regular file; expected a JSONL file to append to.`, details: { path } });
    }
    const size = stats.size;
    end = completeLinesEnd(fd, size);
    if (end !== size) ftruncateSync(fd, end);
    writeAllSync(fd, payload, end);
    fsyncSync(fd);
  } catch (error) {
    if (!isDiskFullError(error)) throw error;
    try {
      // Shrinking needs no space; what a reader would skip as a partial line goes now.
      if (fd !== undefined && end >= 0) ftruncateSync(fd, end);
    } catch {
      // the next append cuts it off instead
    }
    throw diskFullError(path, payload.length, error, { kept: `the records already in ${path} are intact` });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Byte offset just past the last newline (0 when there is none). */
function completeLinesEnd(fd: number, size: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  let position = size;
  while (position > 0) {
    const length = Math.min(chunk.length, position);
    position -= length;
    readSync(fd, chunk, 0, length, position);
    const index = chunk.subarray(0, length).lastIndexOf(0x0a);
    if (index >= 0) return position + index + 1;
  }
  return 0;
}

/** Settings of {@link readJsonl} and {@link forEachJsonlRecord}. */
export interface ReadJsonlSettings<T> {
  /** Validates each record; a failure names the file and line. */
  schema?: z.ZodType<T>;
  /** Return no records when the file does not exist instead of throwing NOT_FOUND. */
  allowMissing?: boolean;
  /**
   * Longest line, in bytes without its newline; a longer one is RECORD_TOO_LARGE naming the file
   * and line, refused before it is read whole. Default {@link DEFAULT_MAX_JSONL_LINE_BYTES} (16 MiB).
   */
  maxLineBytes?: number;
  /**
   * Deepest nesting of lists and objects in one record; a deeper one is PARSE_ERROR naming the
   * file and line (code that walks records recursively would overflow the stack). Default
   * {@link DEFAULT_MAX_JSONL_DEPTH} (512).
   */
  maxDepth?: number;
}

/** True when `value` nests lists and objects more than `maxDepth` levels deep (walked without recursion). */
function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

function recordError(path: string, line: number, message: string, code: 'PARSE_ERROR' | 'SCHEMA_VALIDATION', cause?: unknown, details: Record<string, unknown> = {}) {
  return new AgentFlowError({ code, message: `${path}:${line}: ${message}`, cause, details: { path, line, ...details } });
}

/**
 * Visits the records of a JSON-lines file one at a time, in order, holding only the current
 * line: a file of any size is folded in bounded memory. The file is read through a fixed-size
 * buffer, and must be a regular file (a FIFO, device or folder is INVALID_ARGUMENT, never
 * opened for a blocking read). A partial last line (no trailing newline: a write cut short by a
 * crash) is ignored; blank lines are skipped. Each complete line must be at most `maxLineBytes`
 * (RECORD_TOO_LARGE), UTF-8 (PARSE_ERROR naming the byte and its offset in the file), JSON
 * (PARSE_ERROR naming `path:line`) nested at most `maxDepth` levels, and pass `schema`
 * (SCHEMA_VALIDATION naming `path:line` and the field). Returns how many records were visited.
 */
export function forEachJsonlRecord<T = unknown>(path: string, visit: (record: T, line: number) => void, settings: ReadJsonlSettings<T> = {}): number {
  const maxLineBytes = settings.maxLineBytes ?? DEFAULT_MAX_JSONL_LINE_BYTES;
  const maxDepth = settings.maxDepth ?? DEFAULT_MAX_JSONL_DEPTH;
  const fd = openRegularFile(path, { what: 'JSONL file', allowMissing: settings.allowMissing });
  if (fd === undefined) return 0;
  // ignoreBOM keeps a byte-order mark in the text, which JSON then refuses, as before.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let records = 0;
  try {
    forEachLine(path, fd, maxLineBytes, (bytes, line, offset) => {
      let text: string;
      try {
        text = decoder.decode(bytes);
      } catch (cause) {
        const column = firstInvalidUtf8Byte(bytes);
        const byte = bytes[column]!.toString(16).padStart(2, '0');
        throw recordError(path, line, `not UTF-8: byte 0x${byte} at offset ${offset + column} of the file (byte ${column + 1} of the line); write the file as UTF-8.`, 'PARSE_ERROR', cause, { offset: offset + column });
      }
      if (text.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (cause) {
        throw recordError(path, line, `not valid JSON (${(cause as Error).message}).`, 'PARSE_ERROR', cause);
      }
      if (nestsDeeperThan(value, maxDepth)) {
        throw recordError(path, line, `the record nests lists and objects more than ${maxDepth} levels deep (maxDepth); a record of a run nests a few levels.`, 'PARSE_ERROR', undefined, { maxDepth });
      }
      if (settings.schema) {
        const parsed = settings.schema.safeParse(value);
        if (!parsed.success) {
          const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
          throw recordError(path, line, issues, 'SCHEMA_VALIDATION', parsed.error);
        }
        value = parsed.data;
      }
      records++;
      visit(value as T, line);
    });
  } finally {
    closeSync(fd);
  }
  return records;
}

/**
 * Reads a JSON-lines file into an array, with the checks of {@link forEachJsonlRecord} (a
 * regular file, lines capped at `maxLineBytes`, UTF-8, JSON, `schema`). A partial last line is
 * ignored; a malformed complete line is an error naming its line number. A file too large to
 * hold as records is folded with {@link forEachJsonlRecord} instead.
 */
export function readJsonl<T = unknown>(path: string, settings: ReadJsonlSettings<T> = {}): T[] {
  const records: T[] = [];
  forEachJsonlRecord<T>(path, (record) => records.push(record), settings);
  return records;
}
