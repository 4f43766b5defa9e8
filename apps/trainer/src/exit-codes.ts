/** Exit codes of the `agentflow` command. */
export const EXIT = {
  ok: 0,
  /** The command ran and failed (a check found a leak, training diverged...). */
  failure: 1,
  /** The command line or a config file is wrong: nothing was run. */
  usage: 2,
  /** The command exists on the map but is not built yet. */
  notImplemented: 3,
  /**
   * The reader of stdout or stderr went away (`agentflow run --json | head`): the process ends as
   * SIGPIPE ends a C program, with the shell's code for it (128 + 13). A run ended so continues
   * with `--resume`, as after Ctrl-C.
   */
  brokenPipe: 141,
} as const;
