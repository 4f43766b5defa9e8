import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { createFrameReader, encodeFrame } from './frame-reader';

/** Output that code of an earlier call wrote after that call had returned. */
export interface LateOutput {
  call: number;
  text: string;
  /** Bytes it wrote (more than `text` holds when it was cut). */
  bytes: number;
}

/** How one request to the sandboxed REPL ended. */
export type ReplOutcome =
  | {
      kind: 'completed';
      call: number;
      output: string;
      truncated: boolean;
      error: string | undefined;
      late: LateOutput[];
      /** What the sandbox's supervisor says about the call (messages it ignored, threads it could not separate). */
      notes: string[];
    }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'killed'; reason: string }
  | { kind: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: 'violation'; reason: string }
  | { kind: 'startFailed'; detail: string };

export interface ReplSession {
  /** Resolves when the supervisor said the REPL is ready, or with how it failed to start. */
  readonly started: Promise<ReplOutcome | undefined>;
  run(code: string, timeoutMs: number, signal?: AbortSignal): Promise<ReplOutcome>;
  /** Resolves once the sandbox process has exited (at most a few seconds after `kill`). */
  readonly closed: Promise<void>;
  /** Kills the whole sandbox (its process group; the pid namespace dies with it); `reason` ends a pending call. */
  kill(reason?: string): void;
  readonly alive: boolean;
  /** Host pid of the spawned process (the cgroup wrapper, then bwrap). */
  readonly pid: number | undefined;
  /** Answers to earlier calls that arrived after their call was over (none is expected: only the supervisor writes frames). */
  readonly droppedAnswers: number;
}

export interface ReplSessionSettings {
  command: string;
  args: string[];
  startTimeoutMs: number;
  maxFrameBytes: number;
  /** The nonce the supervisor's ready frame must carry (it is in the driver's configuration). */
  readyNonce: string;
  /** Called once, just before the sandbox is killed (to record and kill its whole process tree). */
  onKill?: () => void;
  /** Bytes handed to the child on fd 3 (the seccomp program bwrap reads with `--seccomp 3`). */
  fd3?: Buffer;
}

type Listener = (outcome: ReplOutcome) => void;

/** A fresh random nonce (hex). */
export const newNonce = () => randomBytes(16).toString('hex');

interface AnswerFrame {
  ready?: unknown;
  id?: unknown;
  nonce?: unknown;
  output?: unknown;
  truncated?: unknown;
  error?: unknown;
  late?: unknown;
  notes?: unknown;
}

/**
 * Spawns the sandbox and speaks the frame protocol with the supervisor inside it, the only
 * process there that holds this channel (the code runs in a REPL process without it; see
 * `driver-source.ts`). Every request carries a call id and a fresh nonce; an answer must
 * carry both. A frame with another nonce means the sandbox is not what it should be, so it
 * ends the session as a violation; a second answer to a call already answered is dropped
 * and counted. No answer can ever be taken for a later call's.
 */
export function startReplSession(settings: ReplSessionSettings): ReplSession {
  // An empty environment even for bwrap itself: nothing of the host's env reaches it.
  const child: ChildProcess = spawn(settings.command, settings.args, {
    stdio: ['pipe', 'pipe', 'pipe', settings.fd3 ? 'pipe' : 'ignore'],
    detached: true,
    env: {},
  });
  const stdin = child.stdin as Writable;
  const stdout = child.stdout as Readable;
  const stderr = child.stderr as Readable;
  const fd3 = child.stdio[3] as Writable | null;
  if (settings.fd3 && fd3) {
    fd3.on('error', () => undefined);
    fd3.end(settings.fd3);
  }
  let alive = true;
  let stderrTail = '';
  let listener: Listener | undefined;
  let callId = 0;
  let expected: { id: number; nonce: string } | undefined = { id: 0, nonce: settings.readyNonce };
  const answered = new Map<number, string>();
  let droppedAnswers = 0;
  const deliver = (outcome: ReplOutcome) => {
    const current = listener;
    listener = undefined;
    current?.(outcome);
  };

  const kill = (reason?: string) => {
    if (alive) {
      settings.onKill?.();
      alive = false;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }
    if (reason !== undefined) deliver({ kind: 'killed', reason });
  };
  let lastViolation: string | undefined;
  const violation = (reason: string) => {
    kill();
    lastViolation = reason;
    deliver({ kind: 'violation', reason });
  };

  const onFrame = (message: unknown) => {
    const frame = (message ?? {}) as AnswerFrame;
    if (expected && frame.nonce === expected.nonce && (frame.ready === true ? expected.id === 0 : frame.id === expected.id)) {
      const { id } = expected;
      answered.set(id, expected.nonce);
      expected = undefined;
      if (frame.ready === true) return deliver({ kind: 'completed', call: 0, output: '', truncated: false, error: undefined, late: [], notes: [] });
      if (typeof frame.output !== 'string') return violation('an answer without output');
      return deliver({
        kind: 'completed',
        call: id,
        output: frame.output,
        truncated: frame.truncated === true,
        error: typeof frame.error === 'string' ? frame.error : undefined,
        late: parseLate(frame.late),
        notes: Array.isArray(frame.notes) ? frame.notes.filter((note): note is string => typeof note === 'string') : [],
      });
    }
    if (typeof frame.id === 'number' && typeof frame.nonce === 'string' && answered.get(frame.id) === frame.nonce) {
      droppedAnswers += 1; // a repeated answer: the call is over
      return;
    }
    violation(`a frame that does not carry the nonce of call ${expected?.id ?? callId}: forged by the code`);
  };
  const reader = createFrameReader(settings.maxFrameBytes, onFrame, violation);
  stdout.on('data', (chunk: Buffer) => reader.push(chunk));
  stderr.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  stdin.on('error', () => {
    // EPIPE after the sandbox died; the exit handler reports it.
  });
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  child.on('error', (error) => {
    alive = false;
    markClosed();
    deliver({ kind: 'exited', exitCode: null, signal: null, stderr: `${error.message}\n${stderrTail}` });
  });
  child.on('close', (exitCode, signal) => {
    alive = false;
    markClosed();
    deliver({ kind: 'exited', exitCode, signal, stderr: stderrTail });
  });
  // The sandbox must never keep the host's event loop alive; a pending call's timer does.
  child.unref();
  for (const stream of [stdin, stdout, stderr, fd3]) (stream as unknown as { unref?: () => void } | null)?.unref?.();

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

  const started = wait(settings.startTimeoutMs).then((outcome) => (outcome.kind === 'completed' ? undefined : outcome));

  return {
    started,
    closed,
    get alive() {
      return alive;
    },
    get pid() {
      return child.pid;
    },
    get droppedAnswers() {
      return droppedAnswers;
    },
    kill,
    async run(code, timeoutMs, signal) {
      const failure = await started;
      if (failure) return { kind: 'startFailed', detail: describeStartFailure(failure, settings.startTimeoutMs) };
      if (lastViolation !== undefined) return { kind: 'violation', reason: `${lastViolation} (between calls)` };
      if (!alive) return { kind: 'exited', exitCode: child.exitCode, signal: child.signalCode, stderr: stderrTail };
      callId += 1;
      const nonce = newNonce();
      expected = { id: callId, nonce };
      const outcome = wait(timeoutMs, signal);
      stdin.write(encodeFrame({ id: callId, nonce, code }));
      return outcome;
    },
  };
}

function parseLate(value: unknown): LateOutput[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry) => {
    const { call, text, bytes } = (entry ?? {}) as Record<string, unknown>;
    return typeof call === 'number' && typeof text === 'string' ? [{ call, text, bytes: typeof bytes === 'number' ? bytes : text.length }] : [];
  });
}

function describeStartFailure(outcome: ReplOutcome, startTimeoutMs: number): string {
  switch (outcome.kind) {
    case 'exited':
      return `${outcome.signal ? `killed by ${outcome.signal}` : `exit code ${outcome.exitCode}`}: ${outcome.stderr.trim() || '(no message)'}`;
    case 'timeout':
      return `no answer within ${startTimeoutMs / 1000} s`;
    case 'violation':
    case 'killed':
      return outcome.reason;
    default:
      return outcome.kind;
  }
}
