import { AgentFlowError } from '@agentflow/core';
import { Command } from 'commander';
import { notImplemented } from './commands/not-implemented';
import { loadConfig } from './config/load-config';
import { runConfigSchema } from './config/schema';

export interface ProgramIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Builds the `agentflow` command line. Commands report failures by throwing. */
export function createProgram(io: ProgramIo): Command {
  const program = new Command('agentflow')
    .description('Train tool-using reasoning agents with process rewards and DAPO.')
    .version('0.1.0')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError()
    .exitOverride();

  program
    .command('run')
    .description('Run the whole pipeline: collect -> label -> train-prm -> train -> eval -> report.')
    .option('--config <file>', 'YAML or JSON config (default: the embedded default)')
    .option('--out <dir>', 'run directory')
    .option('--resume <dir>', 'continue a killed run from its last checkpoint')
    .option('--dry-run', 'validate the config, check models, data and endpoints, print the plan')
    .action((options: { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      notImplemented('run', 10);
    });

  const stages: Array<[string, string, number]> = [
    ['solve', 'Answer one question with the agent and print its steps.', 5],
    ['collect', 'Run the untrained agent over the training split and keep every trajectory.', 10],
    ['label', 'Score each planner step in [0, 1] (LLM judge or Monte-Carlo).', 7],
    ['train-prm', 'Train the process reward model on labelled steps.', 7],
    ['train', 'Train the planner with DAPO and step-level credit.', 8],
    ['eval', 'Evaluate a planner on a held-out split.', 10],
    ['report', 'Write report.html for one run, or compare two.', 10],
    ['mcp', 'Serve the tool registry over MCP (stdio).', 5],
    ['model', 'Create, inspect and check Qwen3-architecture models (init, logprobs, grad).', 4],
    ['dedup', 'Find test items that leak into the training data.', 6],
  ];
  for (const [name, description, issue] of stages) {
    program
      .command(name)
      .description(description)
      .allowUnknownOption()
      .allowExcessArguments()
      .option('--config <file>', 'YAML or JSON config')
      .action((options: { config?: string }) => {
        if (options.config) loadConfig(options.config, runConfigSchema);
        notImplemented(name, issue);
      });
  }
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
