import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';

/** Where {@link writeFolderAtomic} builds the new folder and parks the old one: siblings of `dir`. */
export function folderSiblings(dir: string): { partial: string; previous: string } {
  const target = resolve(dir);
  return { partial: `${target}.partial`, previous: `${target}.previous` };
}

/** fsync of a file or folder; a platform that cannot fsync a folder (Windows) skips it. */
function syncPath(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (cause) {
    if (!statSync(path).isDirectory()) throw cause;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Flushes every file under `dir`, then the folders themselves, so a rename publishes written data. */
function syncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) syncTree(path);
    else if (entry.isFile()) syncPath(path);
  }
  syncPath(dir);
}

/**
 * Puts back the folder a {@link writeFolderAtomic} replacement left at `<dir>.previous` when it
 * was killed between its two renames: when `dir` is absent, or an empty folder (a caller that
 * creates its checkpoint folders before writing them makes one), and `<dir>.previous` exists, the
 * old folder, whole, is renamed back to `dir`. Call it before reading a folder that such a
 * replacement may have been writing; otherwise it does nothing.
 */
export function restoreInterruptedFolder(dir: string): void {
  const target = resolve(dir);
  const { previous } = folderSiblings(target);
  if (!existsSync(previous)) return;
  if (existsSync(target)) {
    if (!statSync(target).isDirectory() || readdirSync(target).length > 0) return;
    rmSync(target, { recursive: true, force: true });
  }
  renameSync(previous, target);
}

/**
 * Writes the folder `dir` whole or not at all. `fill` writes into an empty sibling,
 * `<dir>.partial`; once it returns, the files are flushed and the folder is renamed into place.
 * When `dir` exists it is replaced: renamed to `<dir>.previous`, the new folder renamed in, the
 * old one removed.
 *
 * Guarantee, for a process killed at any moment (and, the files and folders being fsynced
 * before each rename, for a crash of the machine on a journaling file system): `dir` is the old
 * folder or the complete new one, never a mix. Between the two renames of a replacement (two
 * system calls) `dir` is absent and the old folder is whole at `<dir>.previous`; the next call
 * for `dir` (or restoreInterruptedFolder) puts it back before anything else, also over an empty
 * `dir` made since. A failure of `fill` or of the flush (a full disk among them) removes
 * `<dir>.partial` and leaves `dir` as it was, as does a failed rename of `<dir>.partial`; a kill
 * leaves `<dir>.partial` behind, which the next call removes.
 * Two processes writing the same `dir` at once are not supported.
 */
export async function writeFolderAtomic(dir: string, fill: (partial: string) => Promise<void>): Promise<void> {
  const target = resolve(dir);
  const { partial, previous } = folderSiblings(target);
  if (existsSync(target) && !statSync(target).isDirectory()) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${target} is a file; expected a folder to write (or a path that does not exist yet).`,
      details: { dir: target },
    });
  }
  restoreInterruptedFolder(target);
  rmSync(previous, { recursive: true, force: true });
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    await fill(partial);
    syncTree(partial);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  if (existsSync(target)) {
    renameSync(target, previous);
    try {
      renameSync(partial, target);
    } catch (error) {
      // The old folder goes back now rather than at the next call.
      renameSync(previous, target);
      rmSync(partial, { recursive: true, force: true });
      throw error;
    }
    syncPath(dirname(target));
    rmSync(previous, { recursive: true, force: true });
  } else {
    try {
      renameSync(partial, target);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      throw error;
    }
    syncPath(dirname(target));
  }
}
