import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Per-REPL control groups. Each resource (memory, process count, CPU share) and the
 * tree-wide kill come from whichever hierarchy can give it here: cgroup v2 (a controller
 * enabled for our subtree, `cgroup.kill`, `cgroup.freeze`), else cgroup v1 (`memory`,
 * `pids`, `cpu`, `freezer`), else nothing, and the caller falls back to RLIMITs, a
 * process-tree walk and a memory watchdog. `describe()` says which one serves what.
 */
export type CgroupResource = 'memory' | 'pids' | 'cpu' | 'kill';

export interface CgroupLimits {
  memoryBytes: number;
  maxProcesses: number;
  /** CPU cores the whole tree may use (a CFS quota). */
  cpuCores: number;
}

/** The mechanism serving each resource, or why none does (e.g. "none: /sys/fs/cgroup/pids not writable"). */
export type CgroupReport = Record<CgroupResource, string>;

export interface SandboxCgroup {
  /** `cgroup.procs` files a wrapper writes its own pid to before it execs bwrap. */
  readonly attachFiles: string[];
  /** Pids of every process in the group (undefined when no hierarchy tracks processes). */
  members(): number[] | undefined;
  /** Stops (true) or resumes (false) every process of the group, where a freezer exists. */
  freeze(frozen: boolean): boolean;
  /** SIGKILLs every process of the group (v2 `cgroup.kill`); false when unavailable. */
  killAll(): boolean;
  /** Processes the kernel killed for the memory limit so far, and peak memory. */
  memoryEvents(): { oomKills: number; peakBytes: number | undefined };
  /** Removes the group's folders; returns what could not be removed. */
  remove(): string[];
}

export interface CgroupProvider {
  readonly report: CgroupReport;
  /** The folders the sandbox groups are created in, one per hierarchy used (for reapStaleCgroups). */
  readonly parents: readonly string[];
  /** Creates the group `name` with these limits, or undefined when no hierarchy is usable. */
  create(name: string, limits: CgroupLimits): SandboxCgroup | undefined;
}

interface Hierarchy {
  version: 1 | 2;
  /** Our own group in this hierarchy, under which the sandbox groups are created. */
  parent: string;
}

const CFS_PERIOD_US = 100_000;

const readText = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** Can we create (and remove) a child group under `parent`? Returns why not, or undefined. */
function probeWritable(parent: string, probeName: string): string | undefined {
  const probe = join(parent, probeName);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return undefined;
  } catch (error) {
    return `${parent} not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/**
 * Finds the usable hierarchies. `root` is where cgroup file systems are mounted and
 * `selfCgroup` the text of /proc/self/cgroup (both injectable for tests).
 */
export function detectCgroups(
  root = '/sys/fs/cgroup',
  selfCgroup = readText('/proc/self/cgroup') ?? '',
  probeName = `agentflow-probe-${process.pid}`,
): CgroupProvider {
  const paths = new Map<string, string>();
  for (const line of selfCgroup.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, , controllers, path] = match as unknown as [string, string, string, string];
    if (controllers === '') paths.set('', path);
    for (const name of controllers.split(',')) if (name) paths.set(name, path);
  }
  // cgroup v2: the unified mount is the root itself (pure v2) or root/unified (hybrid).
  const unifiedMount = existsSync(join(root, 'cgroup.controllers')) ? root : existsSync(join(root, 'unified', 'cgroup.controllers')) ? join(root, 'unified') : undefined;
  const reasons: Partial<Record<CgroupResource, string>> = {};
  let v2: Hierarchy | undefined;
  let v2Controllers = new Set<string>();
  if (unifiedMount && paths.has('')) {
    const parent = join(unifiedMount, paths.get('') ?? '/');
    const why = probeWritable(parent, probeName);
    if (why) reasons.kill = why;
    else {
      v2 = { version: 2, parent };
      v2Controllers = enableV2Controllers(parent, probeName);
    }
  } else reasons.kill = 'no cgroup v2 hierarchy';
  const v1 = (controller: string): Hierarchy | string => {
    const mount = join(root, controller);
    if (!paths.has(controller) || !existsSync(join(mount, 'cgroup.procs'))) return `no cgroup v1 ${controller} hierarchy`;
    const parent = join(mount, paths.get(controller) ?? '/');
    return probeWritable(parent, probeName) ?? { version: 1, parent };
  };
  const pick = (v2Name: 'memory' | 'pids' | 'cpu', v1Name: string): Hierarchy | undefined => {
    if (v2 && v2Controllers.has(v2Name)) return v2;
    const found = v1(v1Name);
    if (typeof found === 'string') {
      reasons[v2Name] = v2 ? `cgroup v2 lacks ${v2Name}; ${found}` : found;
      return undefined;
    }
    return found;
  };
  const memory = pick('memory', 'memory');
  const pids = pick('pids', 'pids');
  const cpu = pick('cpu', 'cpu');
  const freezer = v2 ?? (() => {
    const found = v1('freezer');
    return typeof found === 'string' ? undefined : found;
  })();
  const describe = (hierarchy: Hierarchy | undefined, resource: CgroupResource) =>
    hierarchy ? `cgroup v${hierarchy.version} ${hierarchy.parent}` : `none: ${reasons[resource] ?? 'unavailable'}`;
  const report: CgroupReport = {
    memory: describe(memory, 'memory'),
    pids: describe(pids, 'pids'),
    cpu: describe(cpu, 'cpu'),
    kill: v2 ? `cgroup v2 cgroup.kill ${v2.parent}` : freezer ? `cgroup v1 freezer ${freezer.parent} + SIGKILL of its tasks` : `none: ${reasons.kill}`,
  };
  const used = uniqueHierarchies([v2, memory, pids, cpu, freezer]);
  return {
    report,
    parents: used.map((hierarchy) => hierarchy.parent),
    create(name, limits) {
      if (used.length === 0) return undefined;
      const folders = new Map<Hierarchy, string>();
      for (const hierarchy of used) {
        const folder = join(hierarchy.parent, name);
        mkdirSync(folder, { recursive: true });
        folders.set(hierarchy, folder);
      }
      const file = (hierarchy: Hierarchy | undefined, v1Name: string, v2Name: string) => {
        const folder = hierarchy && folders.get(hierarchy);
        return folder ? join(folder, hierarchy.version === 2 ? v2Name : v1Name) : undefined;
      };
      const write = (path: string | undefined, value: string) => path && writeFileSync(path, value);
      write(file(memory, 'memory.limit_in_bytes', 'memory.max'), String(limits.memoryBytes));
      // No swap for the sandbox either, where swap is accounted.
      const swap = file(memory, 'memory.memsw.limit_in_bytes', 'memory.swap.max');
      if (swap && existsSync(swap)) write(swap, memory?.version === 2 ? '0' : String(limits.memoryBytes));
      write(file(pids, 'pids.max', 'pids.max'), String(limits.maxProcesses));
      const quota = Math.max(1_000, Math.round(limits.cpuCores * CFS_PERIOD_US));
      if (cpu?.version === 2) write(file(cpu, '', 'cpu.max'), `${quota} ${CFS_PERIOD_US}`);
      else if (cpu) {
        write(file(cpu, 'cpu.cfs_period_us', ''), String(CFS_PERIOD_US));
        write(file(cpu, 'cpu.cfs_quota_us', ''), String(quota));
      }
      const tracker = v2 ?? pids ?? freezer ?? memory ?? cpu;
      return {
        attachFiles: [...folders.values()].map((folder) => join(folder, 'cgroup.procs')),
        members() {
          const text = readText(join(folders.get(tracker as Hierarchy) ?? '', 'cgroup.procs'));
          return text === undefined ? undefined : text.split('\n').filter(Boolean).map(Number);
        },
        freeze(frozen) {
          if (!freezer) return false;
          try {
            if (freezer.version === 2) writeFileSync(join(folders.get(freezer) ?? '', 'cgroup.freeze'), frozen ? '1' : '0');
            else writeFileSync(join(folders.get(freezer) ?? '', 'freezer.state'), frozen ? 'FROZEN' : 'THAWED');
            return true;
          } catch {
            return false;
          }
        },
        killAll() {
          if (!v2) return false;
          try {
            writeFileSync(join(folders.get(v2) ?? '', 'cgroup.kill'), '1');
            return true;
          } catch {
            return false;
          }
        },
        memoryEvents() {
          const folder = memory && folders.get(memory);
          if (!folder) return { oomKills: 0, peakBytes: undefined };
          const events = readText(join(folder, memory.version === 2 ? 'memory.events' : 'memory.oom_control')) ?? '';
          const oomKills = Number(/^oom_kill (\d+)/m.exec(events)?.[1] ?? 0);
          const peak = readText(join(folder, memory.version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes'));
          return { oomKills, peakBytes: peak === undefined ? undefined : Number(peak) };
        },
        remove() {
          const left: string[] = [];
          for (const folder of folders.values()) {
            try {
              rmdirSync(folder);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOENT') left.push(`${folder} (${(error as NodeJS.ErrnoException).code})`);
            }
          }
          return left;
        },
      };
    },
  };
}

function uniqueHierarchies(list: Array<Hierarchy | undefined>): Hierarchy[] {
  const seen = new Set<string>();
  const result: Hierarchy[] = [];
  for (const hierarchy of list) {
    if (!hierarchy || seen.has(hierarchy.parent)) continue;
    seen.add(hierarchy.parent);
    result.push(hierarchy);
  }
  return result;
}

/**
 * The v2 controllers a child of `parent` gets: those already delegated, plus those we
 * can enable (fails, and is skipped, when `parent` holds processes itself: the
 * "no internal processes" rule).
 */
function enableV2Controllers(parent: string, probeName: string): Set<string> {
  const available = (readText(join(parent, 'cgroup.controllers')) ?? '').split(/\s+/).filter(Boolean);
  for (const name of ['memory', 'pids', 'cpu']) {
    if (!available.includes(name)) continue;
    try {
      writeFileSync(join(parent, 'cgroup.subtree_control'), `+${name}`);
    } catch {
      // not delegated to us; v1 or the fallback serves it
    }
  }
  const probe = join(parent, probeName);
  try {
    mkdirSync(probe);
    const granted = (readText(join(probe, 'cgroup.controllers')) ?? '').split(/\s+/).filter(Boolean);
    return new Set(granted);
  } catch {
    return new Set();
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // already gone
    }
  }
}
