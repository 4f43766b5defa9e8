import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { AgentFlowError, describeValue } from '../errors/agentflow-error';
import { diskFullError, isDiskFullError } from '../jsonl/disk-full';
import { readSmallRegularFile } from '../jsonl/regular-file';
import { syncDirectory, writeAllSync } from '../jsonl/write-file-atomic';
import { isProcessAlive, processStartTime } from './process-start-time';

/** The lock's file name inside the run directory. */
export const RUN_DIRECTORY_LOCK_FILE = '.lock';

/** Who holds a run directory: what its lock file holds, one JSON object. */
export const runDirectoryLockOwnerSchema = z.object({
  pid: z.number().int().positive().describe('The holding process.'),
  startTime: z.string().nullable().describe('When it started, in clock ticks since boot (/proc/<pid>/stat field 22); null without /proc.'),
  hostname: z.string().describe('The machine it runs on: a pid on another machine cannot be checked.'),
  purpose: z.string().describe('What it does in the directory (`agentflow run --resume`).'),
  acquiredAt: z.string().describe('When it took the lock (ISO 8601).'),
});

/** Who holds a run directory (see {@link runDirectoryLockOwnerSchema}). */
export type RunDirectoryLockOwner = z.infer<typeof runDirectoryLockOwnerSchema>;

/** Settings of {@link acquireRunDirectoryLock}. */
export interface RunDirectoryLockSettings {
  /** What the holder does in the directory, named to a second writer it refuses (`agentflow run --resume`). */
  purpose: string;
  /** The clock of `acquiredAt`; default the system clock. */
  now?: () => Date;
}

/** A held lock of a run directory. */
export interface RunDirectoryLock {
  readonly directory: string;
  /** The lock file, `<directory>/.lock`. */
  readonly path: string;
  readonly owner: RunDirectoryLockOwner;
  /** The owner of a stale lock (its process had ended) that this one replaced, if any. */
  readonly tookOverFrom: RunDirectoryLockOwner | undefined;
  /** Removes the lock file if it still names this holder; again, or after exit, it does nothing. */
  release(): void;
}

/** A lock file is a few hundred bytes; anything larger is not one. */
const MAX_LOCK_BYTES = 64 * 1024;
/** A takeover holds its guard for a few system calls; a guard this old was left by a killed process. */
const STALE_GUARD_MS = 10_000;
const ATTEMPTS = 100;

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const sameOwner = (left: RunDirectoryLockOwner, right: RunDirectoryLockOwner) =>
  left.pid === right.pid && left.startTime === right.startTime && left.hostname === right.hostname && left.acquiredAt === right.acquiredAt;

function lockedError(directory: string, path: string, message: string, holder?: RunDirectoryLockOwner): AgentFlowError {
  return new AgentFlowError({ code: 'RUN_LOCKED', message, details: { directory, path, ...(holder ? { holder } : {}) } });
}

/** The owner the lock file names, or undefined when it is gone; a file that is no lock is RUN_LOCKED. */
function readOwner(directory: string, path: string): RunDirectoryLockOwner | undefined {
  const bytes = readSmallRegularFile(path, MAX_LOCK_BYTES, { what: 'a run directory lock', allowMissing: true });
  if (bytes === undefined) return undefined;
  const text = bytes.toString('utf8');
  let parsed: ReturnType<typeof runDirectoryLockOwnerSchema.safeParse> | undefined;
  try {
    parsed = runDirectoryLockOwnerSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (parsed?.success) return parsed.data;
  throw lockedError(
    directory,
    path,
    `${path} holds ${describeValue(text)}, not a lock this version of AgentFlow wrote ({pid, startTime, hostname, purpose, acquiredAt}); if no other process writes to ${directory}, delete ${path} and run again.`,
  );
}

function heldError(directory: string, path: string, holder: RunDirectoryLockOwner): AgentFlowError {
  const who = `pid ${holder.pid} on ${holder.hostname} (${holder.purpose})`;
  if (holder.hostname !== hostname()) {
    return lockedError(
      directory,
      path,
      `${directory} is locked by ${who} since ${holder.acquiredAt}; from ${hostname()} it cannot be checked whether that process still runs. If it has ended, delete ${path} and run again.`,
      holder,
    );
  }
  if (holder.pid === process.pid) {
    return lockedError(directory, path, `${directory} is already locked by this process (${holder.purpose}) since ${holder.acquiredAt}; release that lock before taking it again.`, holder);
  }
  return lockedError(
    directory,
    path,
    `${directory} is in use: ${who} has held ${path} since ${holder.acquiredAt}, and a second writer would duplicate its records. ` +
      `Wait for that process to end or stop it (kill ${holder.pid}), then run again; a lock whose process has ended is taken over without deleting it.`,
    holder,
  );
}

/** Writes `text` to a new file beside `path`, whole and fsynced; returns its name. */
function writeCandidate(path: string, text: string): string {
  const candidate = `${path}.${process.pid}-${randomUUID()}`;
  const bytes = Buffer.from(text, 'utf8');
  let fd: number | undefined;
  try {
    fd = openSync(candidate, 'wx', 0o644);
    writeAllSync(fd, bytes, 0);
    fsyncSync(fd);
  } catch (error) {
    rmSync(candidate, { force: true });
    if (isDiskFullError(error)) throw diskFullError(path, bytes.length, error, { kept: 'nothing in the run directory was changed' });
    throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return candidate;
}

/** Creates the lock file, whole, only if there is none (a hard link fails with EEXIST, as O_EXCL does). */
function tryCreate(path: string, text: string): boolean {
  const candidate = writeCandidate(path, text);
  try {
    linkSync(candidate, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    if (isDiskFullError(error)) throw diskFullError(path, text.length, error, { kept: 'nothing in the run directory was changed' });
    throw error;
  } finally {
    rmSync(candidate, { force: true });
  }
}

/**
 * Replaces the lock of a dead `stale` owner by ours. One takeover at a time, under an O_EXCL
 * guard file, so two processes that both found the lock stale cannot both replace it.
 */
function takeOver(directory: string, path: string, stale: RunDirectoryLockOwner, mine: RunDirectoryLockOwner, text: string): 'taken' | 'changed' | 'busy' {
  const guard = `${path}.takeover`;
  try {
    closeSync(openSync(guard, 'wx', 0o644));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(guard).mtimeMs > STALE_GUARD_MS) rmSync(guard, { force: true });
    } catch {
      // removed meanwhile
    }
    return 'busy';
  }
  try {
    const current = readOwner(directory, path);
    if (current === undefined || !sameOwner(current, stale)) return 'changed';
    renameSync(writeCandidate(path, text), path);
    syncDirectory(directory);
    const after = readOwner(directory, path);
    return after !== undefined && sameOwner(after, mine) ? 'taken' : 'changed';
  } finally {
    rmSync(guard, { force: true });
  }
}

/**
 * Takes the one-writer lock of a run directory (created when absent): the file
 * `<directory>/.lock`, created exclusively, holding who took it ({@link RunDirectoryLockOwner}:
 * pid, process start time, host, purpose, when). A lock whose owner is dead (no such pid, or the
 * pid now belongs to a process with another start time) is taken over, atomically; one whose
 * owner is alive (or on another host, where it cannot be checked) is refused at once with
 * RUN_LOCKED naming the holder's pid, purpose and since when, and what to do.
 *
 * The lock is released by `release()` and, failing that, when the process exits; a process
 * killed with SIGKILL leaves a lock that the next acquire takes over.
 */
export function acquireRunDirectoryLock(directory: string, settings: RunDirectoryLockSettings): RunDirectoryLock {
  const target = resolve(directory);
  const path = join(target, RUN_DIRECTORY_LOCK_FILE);
  const owner: RunDirectoryLockOwner = {
    pid: process.pid,
    startTime: processStartTime(process.pid) ?? null,
    hostname: hostname(),
    purpose: settings.purpose,
    acquiredAt: (settings.now ?? (() => new Date()))().toISOString(),
  };
  const text = `${JSON.stringify(owner)}\n`;
  try {
    mkdirSync(target, { recursive: true });
  } catch (error) {
    if (isDiskFullError(error)) throw diskFullError(target, 0, error, { kept: 'nothing was written' });
    throw error;
  }
  let last: RunDirectoryLockOwner | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (tryCreate(path, text)) {
      syncDirectory(target);
      return heldLock(target, path, owner, undefined);
    }
    const found = readOwner(target, path);
    if (found === undefined) continue; // released meanwhile
    last = found;
    if (found.hostname !== owner.hostname || isProcessAlive(found.pid, found.startTime)) throw heldError(target, path, found);
    const outcome = takeOver(target, path, found, owner, text);
    if (outcome === 'taken') return heldLock(target, path, owner, found);
    if (outcome === 'busy') sleep(20);
  }
  throw lockedError(target, path, `${target}: could not take ${path} after ${ATTEMPTS} attempts; other processes keep taking it${last ? ` (last seen: pid ${last.pid}, ${last.purpose})` : ''}.`, last);
}

function heldLock(directory: string, path: string, owner: RunDirectoryLockOwner, tookOverFrom: RunDirectoryLockOwner | undefined): RunDirectoryLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try {
      const current = readOwner(directory, path);
      if (current !== undefined && sameOwner(current, owner)) rmSync(path, { force: true });
    } catch {
      // not ours any more, or unreadable: leave it
    }
  };
  process.on('exit', release);
  return { directory, path, owner, tookOverFrom, release };
}
