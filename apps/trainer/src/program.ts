import { AgentFlowError } from '@agentflow/core';
import { Command } from 'commander';
import type { CommandContext, RegisterCommand } from './commands/command-context';
import { registerCollectCommand } from './commands/collect';
import { registerDedupCommand } from './commands/dedup';
import { registerEvalCommand } from './commands/eval';
import { registerLabelCommand } from './commands/label';
import { registerMcpCommand } from './commands/mcp';
import { registerModelCommand } from './commands/model';
import { registerPrmCommand } from './commands/prm';
import { registerReportCommand } from './commands/report';
import { registerRunCommand } from './commands/run';
import { registerSolveCommand } from './commands/solve';
import { registerSweepCommand } from './commands/sweep';
import { registerTrainCommand } from './commands/train';
import { registerTrainPrmCommand } from './commands/train-prm';

export type ProgramIo = CommandContext;

/** In the order `--help` lists them: the main job first, then its stages, then tools. */
const commands: RegisterCommand[] = [
  registerRunCommand,
  registerSweepCommand,
  registerSolveCommand,
  registerCollectCommand,
  registerLabelCommand,
  registerTrainPrmCommand,
  registerPrmCommand,
  registerTrainCommand,
  registerEvalCommand,
  registerReportCommand,
  registerMcpCommand,
  registerModelCommand,
  registerDedupCommand,
];

/** Builds the `agentflow` command line. Commands report failures by throwing. */
export function createProgram(io: ProgramIo): Command {
  const program = new Command('agentflow')
    .description('Train tool-using reasoning agents with process rewards and DAPO.')
    .version('0.1.0')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError()
    .exitOverride();
  for (const register of commands) register(program, io);
  return program;
}

/** Maps a thrown error to the process exit code and a message for stderr. */
export function describeFailure(error: unknown): { exitCode: number; message: string } {
  if (AgentFlowError.isInstance(error)) {
    switch (error.code) {
      case 'INVALID_CONFIG':
      case 'INVALID_ARGUMENT':
        return { exitCode: 2, message: `error: ${error.message}` };
      case 'NOT_IMPLEMENTED':
        return { exitCode: 3, message: `error: ${error.message}` };
      default:
        return { exitCode: 1, message: `error [${error.code}]: ${error.message}` };
    }
  }
  return { exitCode: 1, message: `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` };
}
