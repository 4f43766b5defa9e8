import { AgentFlowError } from '@agentflow/core';

/** Waits `ms` milliseconds; rejects with an ABORTED AgentFlowError when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error every cancelled call in @agentflow/llm rejects with. */
export function abortedError(signal?: AbortSignal, what = 'The request'): AgentFlowError {
  return new AgentFlowError({
    code: 'ABORTED',
    message: `${what} was cancelled.`,
    cause: signal?.reason,
  });
}
