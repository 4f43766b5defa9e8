import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createFrameReader, encodeFrame } from './frame-reader';

/** How one request to the sandboxed REPL ended. */
export type ReplOutcome =
  | { kind: 'completed'; output: string; truncated: boolean; error: string | undefined }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: 'violation'; reason: string }
  | { kind: 'startFailed'; detail: string };

export interface ReplSession {
  /** Resolves when the driver said it is ready, or with how it failed to start. */
  readonly started: Promise<ReplOutcome | undefined>;
  run(code: string, timeoutMs: number, signal?: AbortSignal): Promise<ReplOutcome>;
  /** Resolves once the sandbox process has exited (at most a few seconds after `kill`). */
  readonly closed: Promise<void>;
  /** Kills the whole sandbox (its process group; the pid namespace dies with it). */
  kill(): void;
  readonly alive: boolean;
}

export interface ReplSessionSettings {
  command: string;
  args: string[];
  startTimeoutMs: number;
  maxFrameBytes: number;
}

type Listener = (outcome: ReplOutcome) => void;

/** Spawns the sandbox and speaks the frame protocol with the driver inside it. */
export function startReplSession(settings: ReplSessionSettings): ReplSession {
  // An empty environment even for bwrap itself: nothing of the host's env reaches it.
  const child: ChildProcessWithoutNullStreams = spawn(settings.command, settings.args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: {},
  });
  let alive = true;
  let stderrTail = '';
  let listener: Listener | undefined;
  const deliver = (outcome: ReplOutcome) => {
    const current = listener;
    listener = undefined;
    current?.(outcome);
  };

  const kill = () => {
    if (!alive) return;
    alive = false;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };

  const reader = createFrameReader(
    settings.maxFrameBytes,
    (message) => {
      const frame = message as { ready?: boolean; output?: unknown; truncated?: unknown; error?: unknown };
      if (frame.ready === true) return deliver({ kind: 'completed', output: '', truncated: false, error: undefined });
      if (typeof frame.output !== 'string') {
        kill();
        return deliver({ kind: 'violation', reason: 'response without output' });
      }
      deliver({
        kind: 'completed',
        output: frame.output,
        truncated: frame.truncated === true,
        error: typeof frame.error === 'string' ? frame.error : undefined,
      });
    },
    (reason) => {
      kill();
      deliver({ kind: 'violation', reason });
    },
  );
  child.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  child.stdin.on('error', () => {
    // EPIPE after the sandbox died; the exit handler reports it.
  });
  child.on('error', (error) => {
    alive = false;
    markClosed();
    deliver({ kind: 'exited', exitCode: null, signal: null, stderr: `${error.message}\n${stderrTail}` });
  });
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  child.on('close', (exitCode, signal) => {
    alive = false;
    markClosed();
    deliver({ kind: 'exited', exitCode, signal, stderr: stderrTail });
  });
  // The sandbox must never keep the host's event loop alive; a pending call's timer does.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void }).unref?.();
  }

  const wait = (timeoutMs: number, signal?: AbortSignal) =>
    new Promise<ReplOutcome>((resolve) => {
      const finish = (outcome: ReplOutcome) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        listener = undefined;
        resolve(outcome);
      };
      const onAbort = () => {
        kill();
        finish({ kind: 'aborted' });
      };
      const timer = setTimeout(() => {
        kill();
        finish({ kind: 'timeout' });
      }, timeoutMs);
      listener = finish;
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });

  const started = wait(settings.startTimeoutMs).then((outcome) =>
    outcome.kind === 'completed' ? undefined : outcome,
  );

  return {
    started,
    closed,
    get alive() {
      return alive;
    },
    kill,
    async run(code, timeoutMs, signal) {
      const failure = await started;
      if (failure) return { kind: 'startFailed', detail: describeStartFailure(failure, settings.startTimeoutMs) };
      if (!alive) return { kind: 'exited', exitCode: child.exitCode, signal: child.signalCode, stderr: stderrTail };
      const outcome = wait(timeoutMs, signal);
      child.stdin.write(encodeFrame({ code }));
      return outcome;
    },
  };
}

function describeStartFailure(outcome: ReplOutcome, startTimeoutMs: number): string {
  switch (outcome.kind) {
    case 'exited':
      return `${outcome.signal ? `killed by ${outcome.signal}` : `exit code ${outcome.exitCode}`}: ${outcome.stderr.trim() || '(no message)'}`;
    case 'timeout':
      return `no answer within ${startTimeoutMs / 1000} s`;
    case 'violation':
      return outcome.reason;
    default:
      return outcome.kind;
  }
}
