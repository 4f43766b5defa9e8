import { constants } from 'node:os';
import { type ToolResult, assertNever } from '@agentflow/core';
import { truncateMiddle } from '../registry/truncate';
import type { ResolvedPythonToolSettings } from './python-settings';
import type { LateOutput, ReplOutcome } from './repl-session';

/** bwrap passes on a signal death of Python as exit status 128 + signal number. */
function describeExit(exitCode: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  if (exitCode !== null && exitCode > 128) {
    const name = Object.entries(constants.signals).find(([, number]) => number === exitCode - 128)?.[0];
    if (name) return `was killed by ${name}`;
  }
  return `exited with code ${exitCode}`;
}

/** Late output, labelled with the call it came from, to put before this call's output. */
export function formatLateOutput(late: readonly LateOutput[]): string {
  return late
    .map(({ call, text, bytes }) => {
      const cut = bytes > Buffer.byteLength(text) ? ` (${bytes} bytes, cut)` : '';
      const body = text.endsWith('\n') || text === '' ? text : `${text}\n`;
      return `[sandbox] output written by call ${call} after it had returned${cut}:\n${body}[sandbox] end of call ${call}'s late output\n`;
    })
    .join('');
}

/** The tool result of one REPL outcome; `notes` are the sandbox's own lines about the call. */
export function describeOutcome(outcome: ReplOutcome, settings: ResolvedPythonToolSettings, notes: readonly string[]): Omit<ToolResult, 'durationMs'> {
  const reset = "this task's Python state was reset (the next call starts a fresh REPL).";
  const noteText = notes.length > 0 ? ` ${notes.join(' ')}` : '';
  const failed = (error: string) => ({ output: '', truncated: false, error: `${error}${noteText}` });
  switch (outcome.kind) {
    case 'completed': {
      const error = outcome.error === undefined ? undefined : truncateMiddle(outcome.error.trimEnd(), settings.maxErrorChars).text;
      const late = formatLateOutput(outcome.late);
      const tail = [...outcome.notes.map((note) => `[sandbox] ${note}`), ...notes].map((note) => `${note}\n`).join('');
      const separator = outcome.output === '' || outcome.output.endsWith('\n') || tail === '' ? '' : '\n';
      return { output: late + outcome.output + separator + tail, truncated: outcome.truncated, ...(error === undefined ? {} : { error }) };
    }
    case 'timeout':
      return failed(`Python call timed out after ${settings.timeoutMs / 1000} s (wall clock); the sandbox was killed and ${reset}`);
    case 'aborted':
      return failed(`Python call was cancelled; the sandbox was killed and ${reset}`);
    case 'killed':
      return failed(`The sandbox was killed: ${outcome.reason}; ${reset}`);
    case 'exited': {
      const how = describeExit(outcome.exitCode, outcome.signal);
      const detail = outcome.stderr.trim() ? ` Sandbox said: ${truncateMiddle(outcome.stderr.trim(), 1000).text}` : '';
      return failed(`The Python process ${how} (a CPU-time, memory or process limit, or the code ended it); ${reset}${detail}`);
    }
    case 'violation':
      return failed(`The code wrote into the sandbox's control channel (${outcome.reason}); the sandbox was killed and ${reset}`);
    case 'startFailed':
      return failed(`The Python sandbox failed to start (${truncateMiddle(outcome.detail, 1500).text}).`);
    default:
      return assertNever(outcome, 'REPL outcome');
  }
}
