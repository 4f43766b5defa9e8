import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { AgentFlowError } from '../errors/agentflow-error';

/**
 * Appends records as JSON lines in one write, after cutting off any partial last line
 * that a crash left behind, then fsyncs. A reader therefore sees whole records only.
 */
export function appendJsonl(path: string, records: readonly unknown[]): void {
  if (records.length === 0) return;
  const payload = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''), 'utf8');
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
  try {
    const size = fstatSync(fd).size;
    const end = completeLinesEnd(fd, size);
    if (end !== size) ftruncateSync(fd, end);
    writeSync(fd, payload, 0, payload.length, end);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
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

export interface ReadJsonlSettings<T> {
  /** Validates each record; a failure names the file and line. */
  schema?: z.ZodType<T>;
  /** Return [] when the file does not exist instead of throwing. */
  allowMissing?: boolean;
}

/**
 * Reads a JSON-lines file. A partial last line (no trailing newline: a write cut short
 * by a crash) is ignored; a malformed complete line is an error naming its line number.
 */
export function readJsonl<T = unknown>(path: string, settings: ReadJsonlSettings<T> = {}): T[] {
  if (!existsSync(path)) {
    if (settings.allowMissing) return [];
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `JSONL file not found: ${path}`,
      details: { path },
    });
  }
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  // Whatever follows the last newline is either empty or a partial write.
  lines.pop();
  const records: T[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${path}:${index + 1}: not valid JSON (${(cause as Error).message}).`,
        cause,
        details: { path, line: index + 1 },
      });
    }
    if (settings.schema) {
      const parsed = settings.schema.safeParse(value);
      if (!parsed.success) {
        throw new AgentFlowError({
          code: 'SCHEMA_VALIDATION',
          message: `${path}:${index + 1}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
          cause: parsed.error,
          details: { path, line: index + 1 },
        });
      }
      records.push(parsed.data);
    } else {
      records.push(value as T);
    }
  });
  return records;
}

/**
 * Writes a file atomically: a temporary file in the same folder, fsynced, then renamed
 * over the target. Readers see the old content or the new, never a mix.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(temporary, 'w');
  try {
    const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    writeSync(fd, buffer, 0, buffer.length, 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}
