import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';

/**
 * The sandbox's processes as the host sees them in /proc: used where no cgroup tracks
 * them, to report and kill what a call left running, and by the memory watchdog.
 * Every process of a bwrap pid namespace descends from the bwrap process (orphans are
 * adopted by the namespace's init), so a walk from it finds them all.
 */
export interface ProcessInfo {
  pid: number;
  parent: number;
  name: string;
  /** One letter of /proc/<pid>/stat: R, S, D, Z (a zombie: dead, not yet reaped), ... */
  state: string;
}

const readText = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** One process's pid, parent pid and command name, or undefined when it is gone. */
export function processInfo(pid: number): ProcessInfo | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The name is in parentheses and may itself contain ") ": cut at the last one.
  const close = stat.lastIndexOf(')');
  const name = stat.slice(stat.indexOf('(') + 1, close);
  const fields = stat.slice(close + 2).split(' ');
  return { pid, parent: Number(fields[1]), name, state: fields[0] ?? '?' };
}

/** Pids of every process in /proc (empty where /proc cannot be read). */
export function processIds(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function allProcesses(): ProcessInfo[] {
  return processIds().flatMap((pid) => processInfo(pid) ?? []);
}

/** `root` and every process descending from it. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  const zombies = new Set<number>();
  for (const info of allProcesses()) {
    if (info.state === 'Z') zombies.add(info.pid);
    const siblings = children.get(info.parent) ?? [];
    siblings.push(info.pid);
    children.set(info.parent, siblings);
  }
  const result: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    if (!zombies.has(pid)) result.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return result;
}

/**
 * Memory the processes hold: resident pages (VmRSS, shared pages counted once per
 * process) plus the size of every memfd they hold open, which RSS misses when it is
 * written but not mapped.
 */
export function treeMemoryBytes(pids: readonly number[]): number {
  let total = 0;
  const memfds = new Set<string>();
  for (const pid of pids) {
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(readText(`/proc/${pid}/status`) ?? '');
    if (rss) total += Number(rss[1]) * 1024;
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (!target.startsWith('/memfd:')) continue;
        const stat = statSync(`/proc/${pid}/fd/${fd}`);
        const key = `${stat.dev}:${stat.ino}`;
        if (memfds.has(key)) continue;
        memfds.add(key);
        total += stat.size;
      } catch {
        // closed while we looked
      }
    }
  }
  return total;
}

/** SIGKILLs each pid (those already gone are skipped); returns what was killed, named. */
export function killProcesses(pids: readonly number[]): ProcessInfo[] {
  const killed: ProcessInfo[] = [];
  for (const pid of pids) {
    const info = processInfo(pid);
    if (info?.state === 'Z') continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(info ?? { pid, parent: 0, name: '?', state: '?' });
    } catch {
      // gone already
    }
  }
  return killed;
}

/** "3 processes (python3.11 x2, sleep)". */
export function describeProcesses(list: readonly ProcessInfo[]): string {
  const counts = new Map<string, number>();
  for (const info of list) counts.set(info.name, (counts.get(info.name) ?? 0) + 1);
  const names = [...counts].map(([name, count]) => (count > 1 ? `${name} x${count}` : name)).join(', ');
  return `${list.length} process${list.length === 1 ? '' : 'es'} (${names})`;
}
