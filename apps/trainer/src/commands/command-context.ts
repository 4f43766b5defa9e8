import type { Command } from 'commander';

/** What every subcommand receives: where to write. Commands report failures by throwing. */
export interface CommandContext {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** When the command began, in ms since the epoch (the CLI: its process start); time limits count from it. Default: when the command's action runs. */
  startedAt?: number;
}

/** Adds one subcommand to the program. One file per subcommand, each exporting one of these. */
export type RegisterCommand = (program: Command, context: CommandContext) => void;
