import type { CgroupLimits, CgroupProvider, SandboxCgroup } from './cgroup-limits';
import { type ProcessInfo, describeProcesses, killProcesses, processInfo, processTree, treeMemoryBytes } from './process-tree';
import { type ReplOutcome, type ReplSession, startReplSession } from './repl-session';
import { cgroupWrapper } from './sandbox-command';
import { processesOfUid } from './session-teardown';

/**
 * One sandboxed REPL with everything around it: its cgroup (or the fallback), the kill of
 * whatever a call leaves running, the memory watchdog where no memory cgroup exists, and
 * a teardown that waits until every process of it is gone.
 */
export interface SandboxProcess {
  readonly session: ReplSession;
  /** Runs one call; `notes` say what the sandbox did around it (processes killed, limits hit). */
  call(code: string, timeoutMs: number, signal: AbortSignal): Promise<{ outcome: ReplOutcome; notes: string[] }>;
  /** Kills everything and waits (bounded); returns what could not be cleaned up. */
  tearDown(graceMs?: number): Promise<string[]>;
}

export interface SandboxProcessSettings {
  bwrap: string;
  bwrapArgs: string[];
  seccomp: Buffer | undefined;
  cgroups: CgroupProvider | undefined;
  cgroupName: string;
  limits: CgroupLimits;
  /** The sandbox uid (as root), whose processes teardown waits for. */
  uid: number | undefined;
  startTimeoutMs: number;
  maxFrameBytes: number;
  readyNonce: string;
  /** Interval of the memory watchdog (used only without a memory cgroup). */
  watchdogMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const mebibytes = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;

export function startSandboxProcess(settings: SandboxProcessSettings): SandboxProcess {
  let cgroup: SandboxCgroup | undefined;
  let cgroupFailure: string | undefined;
  try {
    cgroup = settings.cgroups?.create(settings.cgroupName, settings.limits);
  } catch (error) {
    cgroupFailure = `could not create cgroup ${settings.cgroupName}: ${(error as Error).message}`;
  }
  const memoryCgroup = cgroup !== undefined && settings.cgroups?.report.memory.startsWith('cgroup') === true;
  const launch = cgroup ? cgroupWrapper(cgroup.attachFiles, settings.bwrap, settings.bwrapArgs) : { command: settings.bwrap, args: settings.bwrapArgs };
  let core: Set<number> | undefined;
  let killedAtEnd: ProcessInfo[] = [];
  const members = (): number[] => cgroup?.members() ?? (session.pid === undefined ? [] : processTree(session.pid));
  /** SIGKILLs `pids` with the group frozen (where a freezer exists) so none can fork meanwhile. */
  const killFrozen = (pids: number[]) => {
    const frozen = cgroup?.freeze(true) ?? false;
    const killed = killProcesses(pids);
    if (frozen) cgroup?.freeze(false);
    return killed;
  };
  const session = startReplSession({
    command: launch.command,
    args: launch.args,
    startTimeoutMs: settings.startTimeoutMs,
    maxFrameBytes: settings.maxFrameBytes,
    readyNonce: settings.readyNonce,
    ...(settings.seccomp ? { fd3: settings.seccomp } : {}),
    onKill() {
      const all = members();
      killedAtEnd = all.flatMap((pid) => processInfo(pid) ?? []);
      if (!cgroup?.killAll()) killFrozen(all);
    },
  });

  /** Kills every process of the tree but the sandbox's own four (bwrap, its init, the supervisor, the REPL). */
  const sweep = async (): Promise<ProcessInfo[]> => {
    const killed: ProcessInfo[] = [];
    for (let round = 0; round < 50; round += 1) {
      const strays = members().filter((pid) => !core?.has(pid));
      if (strays.length === 0) break;
      killed.push(...killFrozen(strays).filter((info) => !killed.some((seen) => seen.pid === info.pid)));
      await sleep(round < 5 ? 2 : 20);
    }
    return killed;
  };

  return {
    session,
    async call(code, timeoutMs, signal) {
      const notes: string[] = [];
      if (cgroupFailure) notes.push(`[sandbox] ${cgroupFailure}; the fallback limits apply.`);
      const failure = await session.started;
      if (!failure && core === undefined) core = new Set(members());
      const oomBefore = cgroup?.memoryEvents().oomKills ?? 0;
      let watchdog: NodeJS.Timeout | undefined;
      const overMemory = () => {
        const bytes = treeMemoryBytes(members());
        return bytes > settings.limits.memoryBytes ? bytes : undefined;
      };
      if (!memoryCgroup && !failure) {
        watchdog = setInterval(() => {
          const bytes = overMemory();
          if (bytes !== undefined) {
            session.kill(`the process tree held ${mebibytes(bytes)} (RSS + memfds, measured), over its memory limit of ${mebibytes(settings.limits.memoryBytes)}`);
          }
        }, settings.watchdogMs ?? 100);
      }
      let outcome = await session.run(code, timeoutMs, signal);
      if (watchdog) clearInterval(watchdog);
      if (outcome.kind === 'completed') {
        const killed = await sweep();
        if (killed.length > 0) notes.push(`[sandbox] killed ${describeProcesses(killed)} that this call left running.`);
        const held = memoryCgroup ? undefined : overMemory();
        if (held !== undefined) {
          session.kill();
          outcome = { kind: 'killed', reason: `after the call the process tree held ${mebibytes(held)} (RSS + memfds, measured), over its memory limit of ${mebibytes(settings.limits.memoryBytes)}` };
        }
      } else if (killedAtEnd.length > 0) {
        notes.push(`[sandbox] killed ${describeProcesses(killedAtEnd)}.`);
      }
      const oomKills = (cgroup?.memoryEvents().oomKills ?? 0) - oomBefore;
      if (oomKills > 0) {
        notes.push(
          `[sandbox] the process tree reached its memory limit of ${mebibytes(settings.limits.memoryBytes)} (${settings.cgroups?.report.memory}); ` +
            `the kernel killed ${oomKills} process${oomKills === 1 ? '' : 'es'}.`,
        );
      }
      return { outcome, notes };
    },
    async tearDown(graceMs = 3_000) {
      session.kill();
      const deadline = Date.now() + graceMs;
      // The sandbox's pipes are unref'd; this timer keeps the event loop alive meanwhile, and is
      // cleared once the REPL has closed: left running, it held every process that used the tool
      // open for the whole grace period after its work was done.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([session.closed, new Promise<void>((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
      const lingering = () => [...(cgroup?.members() ?? []), ...(settings.uid === undefined ? [] : processesOfUid(settings.uid))];
      while (Date.now() < deadline && lingering().length > 0) {
        if (!cgroup?.killAll()) killProcesses(lingering());
        await sleep(20);
      }
      const problems: string[] = [];
      const left = lingering();
      if (left.length > 0) problems.push(`${left.length} sandbox processes still alive after ${graceMs} ms: ${left.slice(0, 10).join(', ')}`);
      if (cgroup) {
        let remaining = cgroup.remove();
        while (remaining.length > 0 && Date.now() < deadline) {
          await sleep(20);
          remaining = cgroup.remove();
        }
        problems.push(...remaining.map((folder) => `cgroup not removed: ${folder}`));
      }
      return problems;
    },
  };
}
