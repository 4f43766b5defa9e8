import type { Step, Trajectory } from '@agentflow/core';

/**
 * [steps] the state each step of a trajectory acts from, as a key for GiGPO's step groups:
 * the history before it, one entry per earlier step: the tool called and its input (object
 * keys sorted), and what the tool returned (output and error); a step whose reply did not
 * parse is an entry of its own (it changed nothing but used a step of the budget).
 *
 * Two rollouts of one prompt whose earlier steps made the same calls and got the same
 * results are in the same state, GiGPO's anchor state (Feng et al., 2025): the environment as
 * it is, not the planner's words about it. The thoughts are left out, and so is the prompt,
 * which renders them: they are free text sampled anew in every rollout and almost never
 * coincide, so keying on them would leave almost every step in a group of its own.
 */
export function stepStateKeys(trajectory: Pick<Trajectory, 'steps'>): string[] {
  const keys: string[] = [];
  const history: string[] = [];
  for (const step of trajectory.steps) {
    keys.push(`[${history.join(',')}]`);
    history.push(historyEntry(step));
  }
  return keys;
}

function historyEntry(step: Step): string {
  if (step.action === null) return JSON.stringify(['format-error']);
  const result = step.toolResult;
  return JSON.stringify([step.action.action, sortedKeys(step.action.action_input), result?.output ?? null, result?.error ?? null]);
}

/** The same value with every object's keys in order, so `{a, b}` and `{b, a}` stringify alike. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, sortedKeys(record[key])]),
  );
}
