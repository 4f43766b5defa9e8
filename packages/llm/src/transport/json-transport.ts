import { AgentFlowError } from '@agentflow/core';
import PQueue from 'p-queue';
import { fullJitterBackoffMs } from './backoff';
import { createDeadline, type Deadline, formatSeconds } from './deadline';
import { type Attempt, attemptPost, describeReceived, nothingReceived } from './http-attempt';
import type { HttpEnvironment, HttpSettings } from './http-settings';
import { abortedError, sleep as defaultSleep } from './sleep';

/** A parsed JSON response and where it came from. */
export interface JsonReply {
  url: string;
  status: number;
  body: unknown;
}

export interface JsonPostOptions {
  /**
   * Cancels the call (ABORTED). A signal made by `createDeadline` (a run's time limit)
   * also bounds it: every attempt, backoff and Retry-After wait ends by its deadline
   * (TIMEOUT), as the call's own `totalTimeoutMs` does.
   */
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
}

/** POSTs JSON to a list of endpoints with retries, failover and a concurrency limit per endpoint. */
export interface JsonTransport {
  post(path: string, body: unknown, options?: JsonPostOptions): Promise<JsonReply>;
  readonly endpoints: readonly string[];
}

type RetryAttempt = Extract<Attempt, { kind: 'retry' }>;

/** One call's deadline and when the call began (ms since the epoch, the transport's clock). */
interface CallClock {
  deadline: Deadline;
  startedAt: number;
}

const lastOf = (last: RetryAttempt | undefined) =>
  last ? `last: ${last.status === undefined ? 'no response' : `HTTP ${last.status}`} (${last.reason})` : 'no attempt answered';

/** Builds the transport behind the HTTP models. */
export function createJsonTransport(settings: HttpSettings, environment: HttpEnvironment = {}): JsonTransport {
  const attemptSettings = {
    fetch: environment.fetch ?? globalThis.fetch,
    timeoutMs: settings.timeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
    now: environment.now ?? Date.now,
  };
  const random = environment.random ?? Math.random;
  const wait = environment.sleep ?? defaultSleep;
  const now = attemptSettings.now;
  const endpoints = settings.endpoints.map((url) => ({
    baseUrl: url.replace(/\/+$/, ''),
    queue: new PQueue({ concurrency: settings.concurrency }),
  }));
  let cursor = 0;

  /** What the call spent and what bounded it: "in 1.2 s of the 600 s that the call's totalTimeoutMs allowed". */
  function spentWithin(call: CallClock): string {
    return `in ${formatSeconds(now() - call.startedAt)} of the ${formatSeconds(call.deadline.at - call.startedAt)} that ${call.deadline.what} allowed`;
  }

  /** The settings to change, with their values, after the endpoint's URL to check. */
  function advice(): string {
    const bases = endpoints.map((endpoint) => endpoint.baseUrl).join(', ');
    return (
      `Check the endpoint's URL (${bases}) and that its server answers, or change maxRetries (${settings.maxRetries}), ` +
      `timeoutMs (${settings.timeoutMs} ms an attempt) or totalTimeoutMs (${settings.totalTimeoutMs} ms a call).`
    );
  }

  /** The call ran out of time (or was cancelled): the error, with what the attempts saw. */
  function stopped(call: CallClock, url: string, attempts: number, last: RetryAttempt | undefined): AgentFlowError {
    const error = abortedError(call.deadline.signal, `POST ${url}`);
    if (error.code !== 'TIMEOUT') return error;
    const elapsedMs = now() - call.startedAt;
    return new AgentFlowError({
      code: 'TIMEOUT',
      message: `${error.message} ${attempts} attempt(s) made ${spentWithin(call)}; ${lastOf(last)}. ${advice()}`,
      cause: error.cause,
      details: { ...error.details, url, attempts, elapsedMs, deadlineMs: call.deadline.at - call.startedAt, deadline: call.deadline.what },
    });
  }

  /** The wait before the next round would end past the deadline: give up now rather than sleep to fail. */
  function checkWait(call: CallClock, url: string, delay: number, last: RetryAttempt | undefined, attempts: number): void {
    const { deadline } = call;
    const left = deadline.remainingMs();
    if (last?.retryAfterMs !== undefined && last.retryAfterMs > left) {
      throw new AgentFlowError({
        code: last.status === undefined ? 'TIMEOUT' : 'HTTP_ERROR',
        message:
          `POST ${url} answered HTTP ${last.status} with Retry-After: ${last.retryAfter} (${formatSeconds(last.retryAfterMs)}), ` +
          `longer than the ${formatSeconds(left)} left of ${deadline.what}; gave up without waiting (${last.reason}).`,
        details: { url, status: last.status, retryAfter: last.retryAfter, remainingMs: left, attempts },
      });
    }
    if (delay >= left) {
      throw new AgentFlowError({
        code: 'TIMEOUT',
        message:
          `POST ${url}: the backoff of ${formatSeconds(delay)} before retry ${attempts} would end past ${deadline.what} ` +
          `(${formatSeconds(left)} left); gave up after ${attempts} attempt(s) ${spentWithin(call)}; ${lastOf(last)}. ${advice()}`,
        details: { url, remainingMs: left, attempts, elapsedMs: now() - call.startedAt, deadline: deadline.what },
      });
    }
  }

  async function postWithin(call: CallClock, path: string, body: string, options: JsonPostOptions): Promise<JsonReply> {
    const { deadline } = call;
    const start = cursor;
    cursor = (cursor + 1) % endpoints.length;
    const totalAttempts = settings.maxRetries + 1;
    const tried = new Set<string>();
    let last: RetryAttempt | undefined;
    let lastUrl = endpoints[start]!.baseUrl + path;
    let retryAfterMs = 0;
    for (let attempt = 0; attempt < totalAttempts; attempt++) {
      // Fail over to the next endpoint at once; back off only after a full round of them.
      if (attempt > 0 && attempt % endpoints.length === 0) {
        const round = attempt / endpoints.length - 1;
        const jitter = fullJitterBackoffMs(round, settings.initialBackoffMs, settings.maxBackoffMs, random);
        const delay = Math.max(jitter, Math.min(retryAfterMs, settings.maxRetryAfterMs));
        checkWait(call, lastUrl, delay, last, attempt);
        retryAfterMs = 0;
        try {
          await wait(delay, deadline.signal);
        } catch (error) {
          if (deadline.signal.aborted) throw stopped(call, lastUrl, attempt, last);
          throw error;
        }
      }
      const endpoint = endpoints[(start + attempt) % endpoints.length]!;
      const url = endpoint.baseUrl + path;
      if (deadline.signal.aborted) throw stopped(call, url, attempt, last);
      lastUrl = url;
      tried.add(url);
      let outcome: Attempt;
      let began = false;
      const received = nothingReceived();
      try {
        outcome = await endpoint.queue.add(
          () => {
            began = true;
            return attemptPost(url, { body, headers: options.headers, signal: deadline.signal }, attemptSettings, received);
          },
          { signal: deadline.signal },
        );
      } catch (error) {
        if (!deadline.signal.aborted) throw error;
        if (!began) throw stopped(call, url, attempt, last);
        throw stopped(call, url, attempt + 1, { kind: 'retry', reason: `cut short by ${deadline.what} (${describeReceived(received)})` });
      }
      if (outcome.kind === 'ok') return { url, status: outcome.status, body: outcome.body };
      if (outcome.kind === 'fatal') throw outcome.error;
      if (deadline.signal.aborted) throw stopped(call, url, attempt + 1, outcome);
      last = outcome;
      if (outcome.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs, outcome.retryAfterMs);
    }
    const status = last?.status;
    const urls = [...tried];
    throw new AgentFlowError({
      code: status !== undefined ? 'HTTP_ERROR' : last?.timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
      message:
        `POST ${urls.length > 1 ? urls.join(', ') : lastUrl} failed after ${totalAttempts} attempt(s) ${spentWithin(call)}; ` +
        `last status: ${status === undefined ? 'no response' : `HTTP ${status}`} (${last?.reason ?? 'unknown'}). ${advice()}`,
      details: { url: lastUrl, urls, status, attempts: totalAttempts, elapsedMs: now() - call.startedAt, deadline: deadline.what },
    });
  }

  async function post(path: string, payload: unknown, options: JsonPostOptions = {}): Promise<JsonReply> {
    const startedAt = now();
    const deadline = createDeadline({
      timeLimitMs: settings.totalTimeoutMs,
      startedAt,
      parent: options.signal,
      what: "the call's totalTimeoutMs",
      now,
    });
    try {
      return await postWithin({ deadline, startedAt }, path, JSON.stringify(payload), options);
    } finally {
      deadline.dispose();
    }
  }

  return { post, endpoints: endpoints.map((endpoint) => endpoint.baseUrl) };
}
