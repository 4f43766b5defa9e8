import { AgentFlowError, type Random } from '@agentflow/core';

/** Where the trainer is in its data: the shuffled order of the current epoch and the next position in it. */
export interface DataCursorState {
  epoch: number;
  position: number;
  /** Prompt indices of the current epoch, in the order they are served. */
  order: number[];
}

export interface DataCursor {
  /** The next `count` prompt indices; a new shuffled epoch starts when one runs out. */
  take(count: number): number[];
  getState(): DataCursorState;
}

/**
 * Serves prompt indices epoch by epoch, each epoch shuffled with `random`. The state holds
 * the whole order, so a restored cursor serves exactly what the original would have.
 */
export function createDataCursor(size: number, random: Random, state?: DataCursorState): DataCursor {
  if (!Number.isInteger(size) || size < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `The prompt set must not be empty (got ${size} prompts).` });
  }
  if (state !== undefined && (state.order.length !== size || state.position > size || state.position < 0)) {
    throw new AgentFlowError({
      code: 'CHECKPOINT_ERROR',
      message: `Checkpointed data cursor covers ${state.order.length} prompts (position ${state.position}) but the prompt set has ${size}; resume with the same prompts.`,
    });
  }
  const shuffled = () => random.shuffle(Array.from({ length: size }, (_value, index) => index));
  let epoch = state?.epoch ?? 0;
  let position = state?.position ?? 0;
  let order = state ? [...state.order] : shuffled();
  return {
    take(count) {
      const taken: number[] = [];
      while (taken.length < count) {
        if (position >= order.length) {
          epoch += 1;
          position = 0;
          order = shuffled();
        }
        taken.push(order[position] as number);
        position += 1;
      }
      return taken;
    },
    getState() {
      return { epoch, position, order: [...order] };
    },
  };
}
