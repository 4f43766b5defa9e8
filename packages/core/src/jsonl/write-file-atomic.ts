import { closeSync, constants, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { diskFullError, isDiskFullError } from './disk-full';

/** Writes all of `bytes` at `position` (a write may take fewer bytes than asked, e.g. just before ENOSPC). */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, position + written);
}

/** Errors of a platform or file system that cannot fsync a folder (Windows, some network file systems). */
const UNSYNCABLE_DIRECTORY = new Set(['EISDIR', 'EINVAL', 'EPERM', 'EACCES', 'ENOTSUP', 'EBADF']);

/** fsyncs a folder, so a rename or a new name in it survives a crash of the machine. */
export function syncDirectory(directory: string): void {
  let fd: number;
  try {
    fd = openSync(directory, constants.O_RDONLY);
  } catch (error) {
    if (UNSYNCABLE_DIRECTORY.has((error as NodeJS.ErrnoException).code ?? '')) return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!UNSYNCABLE_DIRECTORY.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    closeSync(fd);
  }
}

/** Closes and removes a temporary file after a failure, without hiding that failure behind another. */
function cleanUp(fd: number | undefined, temporary: string): void {
  try {
    if (fd !== undefined) closeSync(fd);
  } catch {
    // the write's own error is the one to report
  }
  try {
    rmSync(temporary, { force: true });
  } catch {
    // as above
  }
}

/**
 * Writes a file atomically: a temporary file in the same folder, written whole and fsynced, then
 * renamed over the target, then the folder fsynced. Readers see the old content or the new,
 * never a mix, also after a crash of the machine.
 *
 * When any step fails the temporary file is removed and `path` keeps its previous version. A
 * full device or quota (ENOSPC, EDQUOT) is the AgentFlowError DISK_FULL naming the folder and
 * the bytes (see diskFullError); other errors are thrown as they are.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const temporary = `${path}.tmp-${process.pid}-${Date.now()}`;
  let fd: number | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(temporary, 'w');
    writeAllSync(fd, bytes, 0);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
  } catch (error) {
    cleanUp(fd, temporary);
    if (isDiskFullError(error)) throw diskFullError(path, bytes.length, error);
    throw error;
  }
  syncDirectory(dirname(path));
}
