import { AgentFlowError } from '@agentflow/core';
import { setLongTimeout } from './long-timeout';

/** Waits `ms` milliseconds; rejects with `abortedError(signal)` when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal));
      return;
    }
    const cancel = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      cancel();
      reject(abortedError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The error every cancelled call in @agentflow/llm rejects with: ABORTED, or TIMEOUT when
 * the signal was aborted by a deadline (its reason is a TIMEOUT AgentFlowError, see
 * `createDeadline`), whose message it repeats.
 */
export function abortedError(signal?: AbortSignal, what = 'The request'): AgentFlowError {
  const reason: unknown = signal?.reason;
  if (AgentFlowError.hasCode(reason, 'TIMEOUT')) {
    return new AgentFlowError({
      code: 'TIMEOUT',
      message: `${what} was stopped: ${reason.message}`,
      cause: reason,
      ...(reason.details ? { details: reason.details } : {}),
    });
  }
  return new AgentFlowError({
    code: 'ABORTED',
    message: `${what} was cancelled.`,
    cause: signal?.reason,
  });
}
