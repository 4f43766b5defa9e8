/** Exit codes of the `agentflow` command. */
export const EXIT = {
  ok: 0,
  /** The command ran and failed (a check found a leak, training diverged...). */
  failure: 1,
  /** The command line or a config file is wrong: nothing was run. */
  usage: 2,
  /** The command exists on the map but is not built yet. */
  notImplemented: 3,
} as const;
