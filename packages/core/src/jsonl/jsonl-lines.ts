import { readSync } from 'node:fs';
import { AgentFlowError } from '../errors/agentflow-error';
import { formatByteCount } from '../http/read-limited-body';

/** Bytes read from the file at a time: the reader holds this buffer and the current line, nothing more. */
const READ_CHUNK_BYTES = 256 * 1024;

/**
 * Visits one complete line: its bytes without the newline (a view that is valid only during the
 * call), its 1-based number and the byte offset in the file where it starts.
 */
export type LineVisitor = (bytes: Uint8Array, line: number, offset: number) => void;

function lineTooLong(path: string, line: number, offset: number, maxLineBytes: number): AgentFlowError {
  return new AgentFlowError({
    code: 'RECORD_TOO_LARGE',
    message:
      `${path}:${line}: the record starting at byte ${offset} is longer than ${formatByteCount(maxLineBytes)}, ` +
      'the cap on one line of a JSONL file (maxLineBytes); it was refused before it was read whole. ' +
      'A record that large is not one a run writes: check the file, or raise maxLineBytes if the record is genuine.',
    details: { path, line, offset, maxLineBytes },
  });
}

/**
 * Reads the open file `fd` (the file `path`) from its start through one fixed-size buffer and
 * hands each complete line to `visit`. Bytes after the last newline (a write cut short) are
 * not visited. A line longer than `maxLineBytes` is RECORD_TOO_LARGE naming the file, line and
 * cap, thrown as soon as the line passes the cap, before the rest of it is read.
 */
export function forEachLine(path: string, fd: number, maxLineBytes: number, visit: LineVisitor): void {
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  // The start of the current line when it began in an earlier chunk (copies: `chunk` is reused).
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 1;
  let lineStart = 0;
  let position = 0;
  for (;;) {
    const read = readSync(fd, chunk, 0, chunk.length, position);
    if (read === 0) return;
    const view = chunk.subarray(0, read);
    let start = 0;
    while (start < read) {
      const newline = view.indexOf(0x0a, start);
      const end = newline === -1 ? read : newline;
      if (pendingBytes + end - start > maxLineBytes) throw lineTooLong(path, line, lineStart, maxLineBytes);
      if (newline === -1) {
        pending.push(Buffer.from(view.subarray(start)));
        pendingBytes += read - start;
        break;
      }
      const bytes = pendingBytes === 0 ? view.subarray(start, newline) : Buffer.concat([...pending, view.subarray(start, newline)]);
      visit(bytes, line, lineStart);
      pending = [];
      pendingBytes = 0;
      line++;
      lineStart = position + newline + 1;
      start = newline + 1;
    }
    position += read;
  }
}
