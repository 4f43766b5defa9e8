import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, processStartTime } from '@agentflow/core';

/**
 * Sandbox uids shared by every AgentFlow process of a machine: a uid is taken by creating
 * `<directory>/<uid>.lock` with O_EXCL, holding the owner's pid and its start time. A
 * lock whose owner is gone (or whose pid now belongs to a newer process) is stale and
 * taken over, so a killed process never leaks its uids for long.
 */
export interface UidAllocator {
  /** Takes the lowest free uid of the range; throws TOOL_ERROR when none is left. */
  acquire(): number;
  release(uid: number): void;
  readonly directory: string;
}

export interface UidAllocatorSettings {
  directory: string;
  firstUid: number;
  count: number;
  /** Live processes of a uid (a uid still running code is never handed out). */
  processesOfUid?: (uid: number) => number[];
  pid?: number;
}


function ownerAlive(text: string): boolean {
  const [pid, started] = text.trim().split(' ');
  if (!pid || !/^\d+$/.test(pid)) return false;
  const now = processStartTime(Number(pid));
  return now !== undefined && now === started;
}

export function createUidAllocator(settings: UidAllocatorSettings): UidAllocator {
  const pid = settings.pid ?? process.pid;
  const owner = `${pid} ${processStartTime(pid) ?? '?'}\n`;
  const held = new Set<number>();
  const lockPath = (uid: number) => join(settings.directory, `${uid}.lock`);

  const tryTake = (uid: number): boolean => {
    const path = lockPath(uid);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        const fd = openSync(path, 'wx', 0o644);
        writeSync(fd, owner);
        closeSync(fd);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue; // released meanwhile: try again
      }
      // A lock being written has no owner yet; leave it to its writer.
      if (text === '' || ownerAlive(text)) return false;
      rmSync(path, { force: true });
    }
    return false;
  };

  return {
    directory: settings.directory,
    acquire() {
      mkdirSync(settings.directory, { recursive: true, mode: 0o755 });
      for (let uid = settings.firstUid; uid < settings.firstUid + settings.count; uid += 1) {
        if (held.has(uid) || !tryTake(uid)) continue;
        if ((settings.processesOfUid?.(uid) ?? []).length > 0) {
          // A stray of a crashed owner still runs as this uid: leave it to its teardown.
          rmSync(lockPath(uid), { force: true });
          continue;
        }
        held.add(uid);
        return uid;
      }
      throw new AgentFlowError({
        code: 'TOOL_ERROR',
        message:
          `No free sandbox uid in ${settings.firstUid}..${settings.firstUid + settings.count - 1} ` +
          `(locks in ${settings.directory}); dispose finished tasks or raise sandboxUidCount.`,
      });
    },
    release(uid) {
      if (!held.delete(uid)) return;
      try {
        if (readFileSync(lockPath(uid), 'utf8') === owner) rmSync(lockPath(uid), { force: true });
      } catch {
        // already gone
      }
    },
  };
}
