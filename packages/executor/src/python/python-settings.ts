import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';

/**
 * Settings of the python tool. Defaults are sized for agent steps (a sympy solve, a numpy
 * array of a few million floats), not for long computations.
 */
export const pythonToolSettingsSchema = z
  .object({
    python: z
      .string()
      .default('python3')
      .describe('Python interpreter (name on PATH or path); resolved once to its real executable and prefix.'),
    bwrapPath: z.string().default('bwrap').describe('bubblewrap executable (name on PATH or path).'),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('Wall-clock limit of one call; past it the sandbox is killed and the task state reset.'),
    startTimeoutMs: z.number().int().positive().default(15_000).describe('Limit for the REPL to start.'),
    cpuSecondsPerCall: z
      .number()
      .int()
      .positive()
      .default(20)
      .describe('CPU seconds one call may use (RLIMIT_CPU soft limit, raised before each call).'),
    cpuSecondsPerTask: z
      .number()
      .int()
      .positive()
      .default(600)
      .describe('CPU seconds a REPL may use over its life (RLIMIT_CPU hard limit; SIGKILL past it).'),
    memoryBytes: z
      .number()
      .int()
      .positive()
      .default(2 * 1024 ** 3)
      .describe(
        'Memory limit: per process (RLIMIT_AS; numpy + sympy need about 150 MB of it) and for the whole process tree ' +
          '(cgroup memory limit, counting memfd and tmpfs pages; without a memory cgroup, a watchdog on the tree\'s RSS + memfds).',
      ),
    maxProcesses: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe('Process limit of the sandbox (cgroup pids.max for the tree, and RLIMIT_NPROC of its uid): contains fork bombs.'),
    cpuCores: z
      .number()
      .positive()
      .default(1)
      .describe('CPU cores the whole process tree may use at once (cgroup CFS quota); not enforced without a cpu cgroup.'),
    cgroups: z
      .enum(['auto', 'off'])
      .default('auto')
      .describe(
        "'auto': one cgroup per REPL where the machine lets us create them (v2 controllers, else v1); " +
          "'off': always the fallback (RLIMITs, a process-tree walk and a memory watchdog).",
      ),
    scratchBytes: z
      .number()
      .int()
      .positive()
      .default(1024 ** 3)
      .describe('Total size of a task\'s scratch folder (a tmpfs of that size as root; else checked after each call). Default 1 GiB (issue #21).'),
    scratchFiles: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('Files and folders a task\'s scratch folder may hold (tmpfs nr_inodes as root; else checked after each call).'),
    maxFileBytes: z.number().int().positive().default(64 * 1024 ** 2).describe('Largest file the code may write (RLIMIT_FSIZE).'),
    maxOpenFiles: z.number().int().positive().default(256).describe('Open file descriptors (RLIMIT_NOFILE).'),
    tmpBytes: z.number().int().positive().default(64 * 1024 ** 2).describe('Size of the in-memory /tmp of the sandbox.'),
    maxOutputBytes: z
      .number()
      .int()
      .positive()
      .default(8_000)
      .describe('Captured stdout+stderr per call; beyond it the middle is cut (the registry default is 8,000 characters too).'),
    maxErrorChars: z.number().int().positive().default(4_000).describe('Longest traceback returned (middle cut).'),
    scratchRoot: z
      .string()
      .default(join(tmpdir(), 'agentflow-python'))
      .describe('Folder under which each task gets its scratch folder (removed by dispose).'),
    sandboxUid: z
      .number()
      .int()
      .min(1)
      .default(61_000)
      .describe(
        'When the host runs as root: first uid of the sandbox users (one uid per live REPL, so process limits are per REPL; ' +
          'uids are locked machine-wide in uidLockDirectory, so concurrent processes never share one).',
      ),
    sandboxUidCount: z.number().int().positive().default(1_000).describe('How many uids from sandboxUid on may be used.'),
    uidLockDirectory: z
      .string()
      .default(join(tmpdir(), 'agentflow-sandbox-uids'))
      .describe('Folder of the uid lock files shared by every AgentFlow process of the machine (`<uid>.lock` holds owner pid and start time).'),
    readOnlyPaths: z
      .array(z.string())
      .optional()
      .describe('Extra read-only folders visible in the sandbox, besides the Python prefix and system libraries.'),
  })
  .strict();

export type PythonToolSettings = z.input<typeof pythonToolSettingsSchema>;
export type ResolvedPythonToolSettings = z.output<typeof pythonToolSettingsSchema>;

export function parsePythonToolSettings(settings: PythonToolSettings): ResolvedPythonToolSettings {
  const parsed = pythonToolSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid python tool settings:\n${formatZodIssues(parsed.error, 'python').join('\n')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
