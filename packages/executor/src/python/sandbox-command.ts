import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where the per-task scratch folder appears inside the sandbox (also HOME and cwd). */
export const SANDBOX_SCRATCH = '/scratch';

/** System library folders Python and its extension modules load from (Debian layout). */
export const DEFAULT_LIBRARY_PATHS = ['/usr/lib', '/usr/lib64', '/lib', '/lib64', '/etc/ld.so.cache'];

export interface SandboxCommandSettings {
  bwrapPath: string;
  pythonExecutable: string;
  /** Folders bound read-only at the same path: the Python prefix(es) and libraries. */
  readOnlyPaths: string[];
  scratchDirectory: string;
  tmpBytes: number;
  /** True when the host runs as root: no user namespace; the REPL drops to `uid` itself, its supervisor to nobody. */
  privileged: boolean;
  driverSource: string;
  driverConfig: Record<string, unknown>;
  /** A seccomp program is handed to bwrap on fd 3 (`--seccomp 3`). */
  seccomp: boolean;
  /** bwrap >= 0.8: `--disable-userns` (only with a user namespace of its own, i.e. not as root). */
  disableUserNamespaces: boolean;
}

/**
 * Wraps a command so that it joins cgroups before it runs: a shell writes its own pid to
 * each `cgroup.procs` file, then execs the command (so bwrap and everything it starts are
 * in the groups from their first instruction; no race with forks).
 */
export function cgroupWrapper(attachFiles: readonly string[], command: string, args: readonly string[]): { command: string; args: string[] } {
  const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
  return { command: '/bin/sh', args: ['-c', script, 'agentflow-cgroup', ...attachFiles, '--', command, ...args] };
}

/**
 * The bwrap argument list. Everything not bound is absent: no /etc, /home, /root, /work,
 * /usr/bin; the network namespace is empty; the environment is cleared.
 */
export function buildSandboxArguments(settings: SandboxCommandSettings): string[] {
  const args: string[] = [];
  if (settings.privileged) {
    // A user namespace as root would map the sandbox to uid 0, which RLIMIT_NPROC ignores;
    // instead the REPL switches to an unprivileged uid (and its supervisor to nobody) with these two capabilities.
    args.push('--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try');
    args.push('--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
  } else {
    args.push('--unshare-all', '--unshare-user');
    if (settings.disableUserNamespaces) args.push('--disable-userns');
  }
  if (settings.seccomp) args.push('--seccomp', '3');
  args.push('--die-with-parent', '--new-session', '--clearenv');
  const environment: Record<string, string> = {
    HOME: SANDBOX_SCRATCH,
    PATH: dirname(settings.pythonExecutable),
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    PYTHONIOENCODING: 'utf-8',
    // One BLAS thread: the address-space limit counts every thread's stack.
    OPENBLAS_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
  };
  for (const [key, value] of Object.entries(environment)) args.push('--setenv', key, value);

  const mounts = mountPlan(settings.readOnlyPaths);
  for (const directory of mounts.directories) args.push('--perms', '0755', '--dir', directory);
  for (const mount of mounts.entries) {
    if (mount.kind === 'symlink') args.push('--symlink', mount.target, mount.path);
    else args.push('--ro-bind', mount.path, mount.path);
  }
  args.push('--dev', '/dev', '--proc', '/proc');
  args.push('--size', String(settings.tmpBytes), '--perms', '1777', '--tmpfs', '/tmp');
  // The REPL changes into /scratch itself, after dropping to the uid that owns it.
  args.push('--bind', settings.scratchDirectory, SANDBOX_SCRATCH);
  const bootstrap = "exec(compile(__import__('sys').argv[1], '<agentflow-driver>', 'exec'))";
  args.push(settings.pythonExecutable, '-I', '-B', '-c', bootstrap, settings.driverSource, JSON.stringify(settings.driverConfig));
  return args;
}

type MountEntry = { kind: 'bind'; path: string } | { kind: 'symlink'; path: string; target: string };

/**
 * Binds each existing path (a top-level symlink such as /lib -> usr/lib is recreated as a
 * symlink), and lists the ancestor folders so they can be created world-traversable:
 * bwrap would otherwise create them 0700 and the unprivileged driver could not reach them.
 */
function mountPlan(paths: readonly string[]): { directories: string[]; entries: MountEntry[] } {
  const entries: MountEntry[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    if (seen.has(path) || !existsSync(path)) continue;
    seen.add(path);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) entries.push({ kind: 'symlink', path, target: readlinkSync(path) });
    else entries.push({ kind: 'bind', path });
  }
  // Binding a folder inside another bound folder is redundant; keep the outermost.
  const binds = entries.filter((entry) => entry.kind === 'bind').map((entry) => entry.path);
  const kept = entries.filter(
    (entry) => entry.kind === 'symlink' || !binds.some((other) => other !== entry.path && entry.path.startsWith(`${other}/`)),
  );
  const directories = new Set<string>();
  for (const entry of kept) {
    for (let parent = dirname(entry.path); parent !== '/'; parent = dirname(parent)) directories.add(parent);
  }
  return { directories: [...directories].sort((a, b) => a.length - b.length), entries: kept };
}
