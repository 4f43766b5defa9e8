import { AgentFlowError } from '@agentflow/core';

/** Tracks whether a store was closed, and refuses operations after close() with a clear error. */
export function createClosedGuard(): { close(): void; readonly closed: boolean; assertOpen(operation: string): void } {
  let closed = false;
  return {
    close() {
      closed = true;
    },
    get closed() {
      return closed;
    },
    assertOpen(operation) {
      if (closed) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `MemoryStore.${operation} was called after close(); open a new store.`,
        });
      }
    },
  };
}
