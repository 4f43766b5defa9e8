import type { TaskItem, TaskSource } from './task-source';

/** The demonstration of a source that takes the most planner decisions. */
export interface LongestDemonstration {
  taskId: string;
  /** Its actions, the finish included. */
  steps: number;
}

/**
 * The longest of a source's demonstrations of `items` (its training split by default): what
 * an agent loop's step limit must at least allow for the demonstrations to be replayed to
 * their finish. Undefined when the source has no demonstrations (benchmark files) or none of
 * the items has one. A source gives an item the same demonstration whenever it is asked.
 */
export function longestDemonstration(source: TaskSource, items: readonly TaskItem[] = source.split('train')): LongestDemonstration | undefined {
  const { demonstration } = source;
  if (!demonstration) return undefined;
  let longest: LongestDemonstration | undefined;
  for (const item of items) {
    const steps = demonstration.call(source, item)?.actions.length ?? 0;
    if (steps > (longest?.steps ?? 0)) longest = { taskId: item.id, steps };
  }
  return longest;
}
