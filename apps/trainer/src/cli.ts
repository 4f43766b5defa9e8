#!/usr/bin/env node
import { CommanderError } from 'commander';
import { EXIT } from './exit-codes';
import { createProgram, describeFailure } from './program';

// Node ignores SIGPIPE, so a closed pipe is an 'error' event that nothing handles (a crash with a
// stack trace) at the next write. Ending quietly is what `cmd | head` expects of a command.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT.brokenPipe);
  });
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram({
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // Time limits (solve --time-limit) count from the process start, module loading included.
    startedAt: performance.timeOrigin,
  });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed the message already; help and version exit 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { exitCode, message } = describeFailure(error);
    process.stderr.write(`${message}\n`);
    return exitCode;
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
