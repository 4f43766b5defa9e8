import { AgentFlowError } from '@agentflow/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeadline, deadlineOf, formatSeconds } from './deadline';
import { MAX_TIMER_MS, setLongTimeout } from './long-timeout';
import { abortedError, sleep } from './sleep';

afterEach(() => {
  vi.useRealTimers();
});

describe('setLongTimeout', () => {
  it('waits past setTimeout\'s 2^31 - 1 ms in pieces instead of firing at once', () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, MAX_TIMER_MS * 2 + 10);
    vi.advanceTimersByTime(1000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_MS * 2 - 1000 + 9);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('is cancelled by the function it returns', () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, MAX_TIMER_MS + 5)();
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    expect(fired).not.toHaveBeenCalled();
  });
});

describe('createDeadline', () => {
  it('aborts at its time limit with a TIMEOUT reason that abortedError repeats', async () => {
    const deadline = createDeadline({ timeLimitMs: 30, what: "the run's time limit" });
    expect(deadlineOf(deadline.signal)).toEqual({ at: deadline.at, what: "the run's time limit" });
    await expect(sleep(10_000, deadline.signal)).rejects.toThrow(
      "The request was stopped: the run's time limit (0.03 s) ran out.",
    );
    expect(deadline.expired()).toBe(true);
    expect(AgentFlowError.hasCode(abortedError(deadline.signal), 'TIMEOUT')).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
  });

  it('keeps an earlier deadline of its parent, and passes the parent\'s cancellation on as ABORTED', () => {
    const parent = createDeadline({ timeLimitMs: 1000, what: 'the run' });
    const child = createDeadline({ timeLimitMs: 600_000, parent: parent.signal, what: 'the call' });
    expect(child.at).toBe(parent.at);
    expect(child.what).toBe('the run');
    const cancel = new AbortController();
    const other = createDeadline({ timeLimitMs: 600_000, parent: cancel.signal });
    cancel.abort();
    expect(abortedError(other.signal).code).toBe('ABORTED');
    for (const deadline of [parent, child, other]) deadline.dispose();
  });

  it('counts from startedAt when given, and says the whole limit', async () => {
    const deadline = createDeadline({ timeLimitMs: 1000, startedAt: Date.now() - 980, what: 'the --time-limit' });
    await expect(sleep(5000, deadline.signal)).rejects.toThrow('The request was stopped: the --time-limit (1 s) ran out.');
    const late = createDeadline({ timeLimitMs: 1000, startedAt: Date.now() - 5000 });
    await expect(sleep(5000, late.signal)).rejects.toThrow('the deadline (1 s) ran out.');
  });

  it('does not overflow a limit above 2^31 - 1 ms, and refuses one that is not positive', async () => {
    const deadline = createDeadline({ timeLimitMs: 1e13 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deadline.signal.aborted).toBe(false);
    deadline.dispose();
    for (const timeLimitMs of [0, -5, Number.NaN]) {
      expect(() => createDeadline({ timeLimitMs })).toThrow(/must be a positive number of milliseconds/);
    }
  });

  it('formats seconds for messages', () => {
    expect([formatSeconds(2500), formatSeconds(999_999_000), formatSeconds(1234), formatSeconds(30)]).toEqual([
      '2.5 s',
      '999999 s',
      '1.23 s',
      '0.03 s',
    ]);
  });
});
