import { randomInt } from 'node:crypto';
import { AgentFlowError, type Tool, type ToolContext, type ToolResult } from '@agentflow/core';
import { z } from 'zod';
import { type CgroupProvider, type CgroupReport, detectCgroups } from './cgroup-limits';
import { describeOutcome } from './describe-outcome';
import { PYTHON_DRIVER_SOURCE } from './driver-source';
import { type PythonEnvironment, resolvePythonEnvironment } from './python-environment';
import { type PythonToolSettings, type ResolvedPythonToolSettings, parsePythonToolSettings } from './python-settings';
import { newNonce } from './repl-session';
import { DEFAULT_LIBRARY_PATHS, SANDBOX_SCRATCH, buildSandboxArguments } from './sandbox-command';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process';
import { type ScratchFolder, createScratchFolder } from './scratch-folder';
import { buildSeccompFilter, deniedSyscalls } from './seccomp-filter';
import { processesOfUid } from './session-teardown';
import { type UidAllocator, createUidAllocator } from './uid-allocator';
import { reapStaleCgroups, reapStaleScratchFolders } from './stale-sandboxes';

export const pythonInputSchema = z.object({
  code: z.string().describe('Python 3 source to run. The value of a final bare expression is printed.'),
});
export type PythonInput = z.infer<typeof pythonInputSchema>;

/** Which mechanism enforces each guarantee on this machine (see the README's table). */
export interface PythonSandboxReport extends CgroupReport {
  scratch: string;
  seccomp: string;
  namespaces: string;
  uids: string;
}

/** The python tool: a core `Tool` plus a way to see how it would run. */
export interface PythonTool extends Tool<PythonInput> {
  /** Why the tool cannot run here (bubblewrap or Python missing), or undefined when it can. */
  unavailableReason(): Promise<string | undefined>;
  /** The mechanisms in use here (cgroup version per resource, scratch cap, seccomp, uids). */
  sandboxReport(): Promise<PythonSandboxReport>;
  /** Ends the task's REPL (every process of it) and removes its scratch folder; rejects, naming what is left, when that fails. */
  dispose(taskId?: string): Promise<void>;
}

interface TaskState {
  uid: number | undefined;
  scratch: ScratchFolder;
  sandbox: SandboxProcess | undefined;
  started: number;
  /** Why the previous REPL of this task died; said once on the next call. */
  resetNote: string | undefined;
  /** The teardown of a killed REPL, awaited before the next one starts. */
  ending: Promise<string[]> | undefined;
  queue: Promise<unknown>;
}

type Ready = Extract<PythonEnvironment, { kind: 'ready' }>;

/**
 * Creates the `python` tool: one persistent, sandboxed REPL per task id (see README for
 * the isolation it gives and how each part was tested). Never throws from `execute`.
 */
export function createPythonTool(settings: PythonToolSettings = {}): PythonTool {
  const resolved = parsePythonToolSettings(settings);
  const privileged = process.getuid?.() === 0;
  const tasks = new Map<string, TaskState>();
  const seccomp = buildSeccompFilter();
  let uids: UidAllocator | undefined;
  let cgroups: CgroupProvider | undefined;
  let environment: Promise<PythonEnvironment> | undefined;
  // Control groups are named agentflow-<pid>-<n> (the form reapStaleCgroups reads); n starts at a
  // random base so that two python tools of one process never share a group (and kill each other's sandboxes).
  let sessions = randomInt(1, 2 ** 31) * 1_000_000;
  const getEnvironment = () => {
    environment ??= resolvePythonEnvironment(resolved.python, resolved.bwrapPath).then((found) => {
      if (found.kind === 'ready' && resolved.cgroups === 'auto') cgroups = detectCgroups();
      // What killed processes left (their scratch mounts and control groups) goes before we add ours.
      if (found.kind === 'ready') {
        reapStaleScratchFolders(resolved.scratchRoot);
        if (cgroups) reapStaleCgroups(cgroups.parents);
      }
      return found;
    });
    return environment;
  };
  const cgroupReport = (): CgroupReport => {
    if (cgroups) return cgroups.report;
    const why = resolved.cgroups === 'off' ? "none: cgroups 'off' in the settings" : 'none: not detected';
    return { memory: why, pids: why, cpu: why, kill: why };
  };

  const taskState = (taskId: string): TaskState => {
    let state = tasks.get(taskId);
    if (!state) {
      if (privileged) {
        uids ??= createUidAllocator({
          directory: resolved.uidLockDirectory,
          firstUid: resolved.sandboxUid,
          count: resolved.sandboxUidCount,
          processesOfUid,
        });
      }
      const uid = uids?.acquire();
      const safeName = taskId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60) || 'task';
      const scratch = createScratchFolder({
        root: resolved.scratchRoot,
        name: safeName,
        maxBytes: resolved.scratchBytes,
        maxFiles: resolved.scratchFiles,
        uid,
        mount: privileged,
      });
      state = { uid, scratch, sandbox: undefined, started: 0, resetNote: undefined, ending: undefined, queue: Promise.resolve() };
      tasks.set(taskId, state);
    }
    return state;
  };

  const startSandbox = (state: TaskState, ready: Ready): SandboxProcess => {
    const readyNonce = newNonce();
    sessions += 1;
    return startSandboxProcess({
      bwrap: ready.bwrap,
      bwrapArgs: buildSandboxArguments({
        bwrapPath: ready.bwrap,
        pythonExecutable: ready.executable,
        readOnlyPaths: [...ready.prefixes, ...DEFAULT_LIBRARY_PATHS, ...(resolved.readOnlyPaths ?? [])],
        scratchDirectory: state.scratch.path,
        tmpBytes: resolved.tmpBytes,
        privileged,
        driverSource: PYTHON_DRIVER_SOURCE,
        driverConfig: driverConfig(resolved, state.uid, readyNonce),
        seccomp: seccomp !== undefined,
        disableUserNamespaces: !privileged && ready.bwrapVersion[0] * 1000 + ready.bwrapVersion[1] >= 8,
      }),
      seccomp,
      cgroups,
      cgroupName: `agentflow-${process.pid}-${sessions}`,
      limits: { memoryBytes: resolved.memoryBytes, maxProcesses: resolved.maxProcesses, cpuCores: resolved.cpuCores },
      uid: state.uid,
      startTimeoutMs: resolved.startTimeoutMs,
      // Output and late output (each up to maxOutputBytes, at most 6 bytes of JSON a byte) and the error text (up to 2 x maxErrorChars, 12 a character).
      maxFrameBytes: 16 * resolved.maxOutputBytes + 32 * resolved.maxErrorChars + 65_536,
      readyNonce,
    });
  };

  const runOnce = async (state: TaskState, ready: Ready, code: string, signal: AbortSignal) => {
    if (state.ending) {
      await state.ending;
      state.ending = undefined;
    }
    if (!state.sandbox?.session.alive) state.sandbox = startSandbox(state, ready);
    const { outcome, notes } = await state.sandbox.call(code, resolved.timeoutMs, signal);
    const overCap = state.scratch.enforce();
    if (overCap) notes.push(`[sandbox] ${overCap}`);
    const note = state.resetNote;
    state.resetNote = undefined;
    const result = describeOutcome(outcome, resolved, notes);
    if (outcome.kind !== 'completed') {
      state.ending = state.sandbox.tearDown();
      state.sandbox = undefined;
      if (outcome.kind !== 'startFailed') state.resetNote = 'Note: the previous Python session ended, so variables defined before are gone.\n';
    }
    return note ? { ...result, output: note + result.output } : result;
  };

  const disposeTask = async (taskId: string): Promise<string[]> => {
    const state = tasks.get(taskId);
    if (!state) return [];
    tasks.delete(taskId);
    await state.queue;
    const problems: string[] = [];
    if (state.sandbox) problems.push(...(await state.sandbox.tearDown()));
    if (state.ending) problems.push(...(await state.ending));
    const scratch = state.scratch.remove();
    if (scratch) problems.push(`scratch folder not removed: ${scratch}`);
    // A uid whose processes could not be ended stays locked (by this process) rather than be reused.
    if (state.uid !== undefined && problems.every((problem) => !problem.includes('processes still alive'))) uids?.release(state.uid);
    return problems.map((problem) => `task "${taskId}": ${problem}`);
  };

  return {
    name: 'python',
    description:
      'Runs Python 3 in a sandboxed REPL that keeps variables between calls of this task (sympy and numpy ' +
      'installed, no network, files only in the working folder). The value of a final expression is printed.',
    inputSchema: pythonInputSchema,
    async unavailableReason() {
      const found = await getEnvironment();
      return found.kind === 'missing' ? found.message : undefined;
    },
    async sandboxReport() {
      const found = await getEnvironment();
      const arch = process.arch;
      return {
        ...cgroupReport(),
        scratch: privileged
          ? `tmpfs per task (size=${resolved.scratchBytes}, nr_inodes=${resolved.scratchFiles + 1}); a checked folder if mount fails`
          : `folder per task, checked after each call (${resolved.scratchBytes} bytes, ${resolved.scratchFiles} files)`,
        seccomp: seccomp ? `bwrap --seccomp (${arch}): denies ${deniedSyscalls(arch).join(', ')}` : `none: no syscall table for ${arch}`,
        namespaces: privileged
          ? 'new pid, net, ipc, uts, cgroup namespaces; no user namespace (the REPL drops to its uid, its supervisor to nobody); new ones denied by seccomp'
          : `new user, pid, net, ipc, uts, cgroup namespaces${found.kind === 'ready' && found.bwrapVersion[1] >= 8 ? '; --disable-userns' : ''}`,
        uids: privileged
          ? `one uid per live REPL from ${resolved.sandboxUid} (${resolved.sandboxUidCount}), locked machine-wide in ${resolved.uidLockDirectory}`
          : 'the host user, mapped into a user namespace per REPL',
      };
    },
    async execute(input: PythonInput, context: ToolContext): Promise<ToolResult> {
      const started = performance.now();
      const found = await getEnvironment();
      if (found.kind === 'missing') return { output: '', error: found.message, truncated: false, durationMs: performance.now() - started };
      try {
        const state = taskState(context.taskId);
        // One call at a time per task: the REPL is a single conversation.
        const next = state.queue.then(() => runOnce(state, found, input.code, context.signal));
        state.queue = next.catch(() => undefined);
        const result = await next;
        return { ...result, durationMs: performance.now() - started };
      } catch (error) {
        return { output: '', error: `The python tool failed: ${(error as Error).message}`, truncated: false, durationMs: performance.now() - started };
      }
    },
    async dispose(taskId?: string) {
      const problems = (await Promise.all((taskId === undefined ? [...tasks.keys()] : [taskId]).map(disposeTask))).flat();
      if (problems.length > 0) {
        throw new AgentFlowError({
          code: 'TOOL_ERROR',
          message: `The python tool could not clean up everything: ${problems.join('; ')}`,
          details: { problems },
        });
      }
    },
  };
}

function driverConfig(settings: ResolvedPythonToolSettings, uid: number | undefined, nonce: string): Record<string, unknown> {
  return {
    cwd: SANDBOX_SCRATCH,
    uid: uid ?? null,
    gid: uid ?? null,
    nonce,
    memoryBytes: settings.memoryBytes,
    maxProcesses: settings.maxProcesses,
    maxFileBytes: settings.maxFileBytes,
    maxOpenFiles: settings.maxOpenFiles,
    cpuSecondsPerCall: settings.cpuSecondsPerCall,
    cpuSecondsPerTask: settings.cpuSecondsPerTask,
    maxOutputBytes: settings.maxOutputBytes,
    maxErrorChars: settings.maxErrorChars,
  };
}
