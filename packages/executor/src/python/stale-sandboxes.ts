import { readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { removeScratch, SCRATCH_OWNER_MARK, unmountScratch } from './scratch-folder';

/**
 * What a killed process leaves behind: scratch folders (tmpfs mounts as root) and control
 * groups, each named after the pid that made it. A new Python tool removes those whose owner
 * is gone before it makes its own, so runs that were killed do not pile up mounts and groups.
 */
export interface ReapReport {
  /** Paths removed. */
  removed: string[];
  /** What could not be removed, and why. */
  left: string[];
}

/** Whether a process with this pid exists (signal 0: no signal is sent). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Mount points listed in /proc/self/mountinfo (field 5, octal escapes decoded). */
function mountPoints(): Set<string> {
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return new Set();
  }
  const decode = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return new Set(
    text.split('\n').flatMap((line) => {
      const point = line.split(' ')[4];
      return point ? [decode(point)] : [];
    }),
  );
}

const entries = (folder: string): string[] => {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
};

/** Removes the scratch folders under `root` (`<task>-p<pid>-XXXXXX`) whose owner pid is not alive, unmounting tmpfs ones. */
export function reapStaleScratchFolders(root: string, isAlive: (pid: number) => boolean = processAlive): ReapReport {
  const report: ReapReport = { removed: [], left: [] };
  const mounts = mountPoints();
  const owner = new RegExp(`${SCRATCH_OWNER_MARK}(\\d+)-[^-]+$`);
  for (const name of entries(root)) {
    const pid = Number(owner.exec(name)?.[1]);
    if (!(pid > 0) || pid === process.pid || isAlive(pid)) continue;
    const path = resolve(root, name);
    const left = (mounts.has(path) ? unmountScratch(path) : undefined) ?? removeScratch(path);
    if (left === undefined) report.removed.push(path);
    else report.left.push(left);
  }
  return report;
}

/**
 * Removes the sandbox control groups (`agentflow-<pid>-<n>`) under each of `parents` whose owner
 * pid is not alive. Processes still in such a group are sandboxes whose tool died: they are
 * killed first (cgroup v2 `cgroup.kill`, else SIGKILL of each listed pid).
 */
export function reapStaleCgroups(parents: readonly string[], isAlive: (pid: number) => boolean = processAlive): ReapReport {
  const report: ReapReport = { removed: [], left: [] };
  for (const parent of parents) {
    for (const name of entries(parent)) {
      const pid = Number(/^agentflow-(\d+)-\d+$/.exec(name)?.[1]);
      if (!(pid > 0) || pid === process.pid || isAlive(pid)) continue;
      const folder = join(parent, name);
      let members: number[] = [];
      try {
        members = readFileSync(join(folder, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      } catch {
        // no process list: nothing to kill
      }
      if (members.length > 0) {
        try {
          writeFileSync(join(folder, 'cgroup.kill'), '1');
        } catch {
          for (const member of members) {
            try {
              process.kill(member, 'SIGKILL');
            } catch {
              // already gone
            }
          }
        }
      }
      // A killed group empties within milliseconds; rmdir fails with EBUSY until it has.
      let code: string | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          rmdirSync(folder);
          code = undefined;
          break;
        } catch (error) {
          code = (error as NodeJS.ErrnoException).code;
          if (code !== 'EBUSY') break;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        }
      }
      if (code === undefined) report.removed.push(folder);
      else report.left.push(`${folder} (${code})`);
    }
  }
  return report;
}
