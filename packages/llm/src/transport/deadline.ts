import { AgentFlowError } from '@agentflow/core';
import { setLongTimeout } from './long-timeout';

/**
 * Where a signal's deadline is kept. `Symbol.for`, so copies of this package (and anyone
 * else) read the same key; a signal made with `AbortSignal.any` does not inherit it.
 */
const deadlineKey = Symbol.for('agentflow.deadline');

/** One time limit: a signal that aborts when it runs out, and how much is left. */
export interface Deadline {
  /**
   * Aborts at the deadline, with a TIMEOUT AgentFlowError as its reason (`abortedError`
   * turns it into a TIMEOUT error naming the limit), or when the parent aborts, with the
   * parent's reason. Carries its deadline for `deadlineOf`.
   */
  readonly signal: AbortSignal;
  /** When it runs out, in milliseconds since the epoch (`now`'s clock); the parent's when earlier. */
  readonly at: number;
  /** What limit `at` is (this one's `what`, or the parent's when that is earlier), for messages. */
  readonly what: string;
  /** Milliseconds left, never below 0. */
  remainingMs(): number;
  /** True once this deadline's own timer has fired (not the parent's). */
  expired(): boolean;
  /** Stops the timer; call when the work it bounds is over. */
  dispose(): void;
}

export interface DeadlineSettings {
  /** Milliseconds from `startedAt`; any positive length (timers over 2^31 - 1 ms are re-armed, not overflowed). */
  timeLimitMs: number;
  /** When the limited work began, ms since the epoch (default now): a command's limit can count its start-up. */
  startedAt?: number;
  /** Aborting it aborts the deadline's signal; its own deadline, when earlier, is kept. */
  parent?: AbortSignal | undefined;
  /** What ran out, for messages: "the run's time limit" gives "the run's time limit (20 s) ran out." Default "the deadline". */
  what?: string;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
}

/** `2500` as `2.5 s`, `999999000` as `999999 s`, for messages. */
export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(seconds < 10 ? 2 : 1))} s`;
}

/** The deadline a signal carries: when (ms since the epoch) and what limit it is. */
export interface SignalDeadline {
  at: number;
  what: string;
}

/** The deadline `signal` carries, or undefined. */
export function deadlineOf(signal: AbortSignal | undefined): SignalDeadline | undefined {
  const value = (signal as (AbortSignal & { [deadlineKey]?: SignalDeadline }) | undefined)?.[deadlineKey];
  return value && typeof value.at === 'number' ? value : undefined;
}

/**
 * Starts a deadline: every retry, backoff and wait of the HTTP models under its signal
 * ends by `at` (the transport reads it with `deadlineOf`). One per run (`runFlow`'s
 * time limit) and one per call (`totalTimeoutMs`).
 */
export function createDeadline(settings: DeadlineSettings): Deadline {
  const now = settings.now ?? Date.now;
  const { timeLimitMs } = settings;
  if (!(timeLimitMs > 0)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A time limit must be a positive number of milliseconds, got ${String(timeLimitMs)}.`,
      details: { timeLimitMs },
    });
  }
  const own = { at: (settings.startedAt ?? now()) + timeLimitMs, what: settings.what ?? 'the deadline' };
  const inherited = deadlineOf(settings.parent);
  const { at, what } = inherited !== undefined && inherited.at < own.at ? inherited : own;
  const controller = new AbortController();
  let fired = false;
  const cancel = setLongTimeout(() => {
    fired = true;
    controller.abort(
      new AgentFlowError({
        code: 'TIMEOUT',
        message: `${own.what} (${formatSeconds(timeLimitMs)}) ran out.`,
        details: { timeLimitMs, ...(settings.what ? { limit: settings.what } : {}) },
      }),
    );
  }, own.at - now());
  const signal = settings.parent ? AbortSignal.any([settings.parent, controller.signal]) : controller.signal;
  Object.defineProperty(signal, deadlineKey, { value: { at, what } satisfies SignalDeadline });
  return {
    signal,
    at,
    what,
    remainingMs: () => Math.max(0, at - now()),
    expired: () => fired,
    dispose: cancel,
  };
}
