import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { type Tool, type ToolContext, type ToolResult, assertNever } from '@agentflow/core';
import { z } from 'zod';
import { truncateMiddle } from '../registry/truncate';
import { PYTHON_DRIVER_SOURCE } from './driver-source';
import { type PythonEnvironment, resolvePythonEnvironment } from './python-environment';
import { type PythonToolSettings, type ResolvedPythonToolSettings, parsePythonToolSettings } from './python-settings';
import { type ReplOutcome, type ReplSession, startReplSession } from './repl-session';
import { DEFAULT_LIBRARY_PATHS, SANDBOX_SCRATCH, buildSandboxArguments } from './sandbox-command';
import { tearDownSession } from './session-teardown';

export const pythonInputSchema = z.object({
  code: z.string().describe('Python 3 source to run. The value of a final bare expression is printed.'),
});
export type PythonInput = z.infer<typeof pythonInputSchema>;

/** The python tool: a core `Tool` plus a way to see how it would run. */
export interface PythonTool extends Tool<PythonInput> {
  /** Why the tool cannot run here (bubblewrap or Python missing), or undefined when it can. */
  unavailableReason(): Promise<string | undefined>;
  dispose(taskId?: string): Promise<void>;
}

interface TaskState {
  uid: number;
  scratch: string;
  session: ReplSession | undefined;
  /** Why the previous REPL of this task died; said once on the next call. */
  resetNote: string | undefined;
  /** The teardown of a killed REPL, awaited before the next one starts. */
  ending: Promise<void> | undefined;
  queue: Promise<unknown>;
}

/**
 * Creates the `python` tool: one persistent, sandboxed REPL per task id (see README for
 * the isolation it gives). Never throws from `execute`.
 */
export function createPythonTool(settings: PythonToolSettings = {}): PythonTool {
  const resolved = parsePythonToolSettings(settings);
  const privileged = process.getuid?.() === 0;
  const tasks = new Map<string, TaskState>();
  const usedUids = new Set<number>();
  let environment: Promise<PythonEnvironment> | undefined;
  const getEnvironment = () => {
    environment ??= resolvePythonEnvironment(resolved.python, resolved.bwrapPath);
    return environment;
  };

  const taskState = (taskId: string): TaskState => {
    let state = tasks.get(taskId);
    if (!state) {
      let uid = resolved.sandboxUid;
      while (usedUids.has(uid)) uid += 1;
      usedUids.add(uid);
      mkdirSync(resolved.scratchRoot, { recursive: true, mode: 0o755 });
      const safeName = taskId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60) || 'task';
      const scratch = mkdtempSync(join(resolved.scratchRoot, `${safeName}-`));
      if (privileged) chownSync(scratch, uid, uid);
      state = { uid, scratch, session: undefined, resetNote: undefined, ending: undefined, queue: Promise.resolve() };
      tasks.set(taskId, state);
    }
    return state;
  };

  const runOnce = async (state: TaskState, ready: Extract<PythonEnvironment, { kind: 'ready' }>, code: string, signal: AbortSignal) => {
    if (state.ending) {
      await state.ending;
      state.ending = undefined;
    }
    if (!state.session?.alive) {
      state.session = startReplSession({
        command: ready.bwrap,
        args: buildSandboxArguments({
          bwrapPath: ready.bwrap,
          pythonExecutable: ready.executable,
          readOnlyPaths: [...ready.prefixes, ...DEFAULT_LIBRARY_PATHS, ...(resolved.readOnlyPaths ?? [])],
          scratchDirectory: state.scratch,
          tmpBytes: resolved.tmpBytes,
          privileged,
          driverSource: PYTHON_DRIVER_SOURCE,
          driverConfig: driverConfig(resolved, privileged ? state.uid : undefined),
        }),
        startTimeoutMs: resolved.startTimeoutMs,
        maxFrameBytes: 4 * resolved.maxOutputBytes + 4 * resolved.maxErrorChars + 65_536,
      });
    }
    const outcome = await state.session.run(code, resolved.timeoutMs, signal);
    const note = state.resetNote;
    state.resetNote = undefined;
    const result = describeOutcome(outcome, resolved);
    if (outcome.kind !== 'completed') {
      state.ending = tearDownSession(state.session, privileged ? state.uid : undefined);
      state.session = undefined;
      if (outcome.kind !== 'startFailed') state.resetNote = 'Note: the previous Python session ended, so variables defined before are gone.\n';
    }
    return note ? { ...result, output: note + result.output } : result;
  };

  const disposeTask = async (taskId: string) => {
    const state = tasks.get(taskId);
    if (!state) return;
    tasks.delete(taskId);
    if (state.session) await tearDownSession(state.session, privileged ? state.uid : undefined);
    if (state.ending) await state.ending;
    usedUids.delete(state.uid);
    rmSync(state.scratch, { recursive: true, force: true });
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
    async execute(input: PythonInput, context: ToolContext): Promise<ToolResult> {
      const started = performance.now();
      const found = await getEnvironment();
      if (found.kind === 'missing') return { output: '', error: found.message, truncated: false, durationMs: performance.now() - started };
      const state = taskState(context.taskId);
      // One call at a time per task: the REPL is a single conversation.
      const next = state.queue.then(() => runOnce(state, found, input.code, context.signal));
      state.queue = next.catch(() => undefined);
      try {
        const result = await next;
        return { ...result, durationMs: performance.now() - started };
      } catch (error) {
        return { output: '', error: `The python tool failed: ${(error as Error).message}`, truncated: false, durationMs: performance.now() - started };
      }
    },
    async dispose(taskId?: string) {
      await Promise.all((taskId === undefined ? [...tasks.keys()] : [taskId]).map(disposeTask));
    },
  };
}

/** bwrap passes on a signal death of Python as exit status 128 + signal number. */
function describeExit(exitCode: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  if (exitCode !== null && exitCode > 128) {
    const name = Object.entries(constants.signals).find(([, number]) => number === exitCode - 128)?.[0];
    if (name) return `was killed by ${name}`;
  }
  return `exited with code ${exitCode}`;
}

function driverConfig(settings: ResolvedPythonToolSettings, uid: number | undefined): Record<string, unknown> {
  return {
    cwd: SANDBOX_SCRATCH,
    uid: uid ?? null,
    gid: uid ?? null,
    memoryBytes: settings.memoryBytes,
    maxProcesses: settings.maxProcesses,
    maxFileBytes: settings.maxFileBytes,
    maxOpenFiles: settings.maxOpenFiles,
    cpuSecondsPerCall: settings.cpuSecondsPerCall,
    cpuSecondsPerTask: settings.cpuSecondsPerTask,
    maxOutputBytes: settings.maxOutputBytes,
  };
}

function describeOutcome(outcome: ReplOutcome, settings: ResolvedPythonToolSettings): Omit<ToolResult, 'durationMs'> {
  const reset = "this task's Python state was reset (the next call starts a fresh REPL).";
  switch (outcome.kind) {
    case 'completed': {
      const error = outcome.error === undefined ? undefined : truncateMiddle(outcome.error.trimEnd(), settings.maxErrorChars).text;
      return { output: outcome.output, truncated: outcome.truncated, ...(error === undefined ? {} : { error }) };
    }
    case 'timeout':
      return { output: '', truncated: false, error: `Python call timed out after ${settings.timeoutMs / 1000} s (wall clock); the sandbox was killed and ${reset}` };
    case 'aborted':
      return { output: '', truncated: false, error: `Python call was cancelled; the sandbox was killed and ${reset}` };
    case 'exited': {
      const how = describeExit(outcome.exitCode, outcome.signal);
      const detail = outcome.stderr.trim() ? ` Sandbox said: ${truncateMiddle(outcome.stderr.trim(), 1000).text}` : '';
      return {
        output: '',
        truncated: false,
        error: `The Python process ${how} (a CPU-time, memory or process limit, or the code ended it); ${reset}${detail}`,
      };
    }
    case 'violation':
      return { output: '', truncated: false, error: `The code wrote into the sandbox's control channel (${outcome.reason}); the sandbox was killed and ${reset}` };
    case 'startFailed':
      return { output: '', truncated: false, error: `The Python sandbox failed to start (${truncateMiddle(outcome.detail, 1500).text}).` };
    default:
      return assertNever(outcome, 'REPL outcome');
  }
}
