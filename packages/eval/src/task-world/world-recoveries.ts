import type { PlannerAction, Random } from '@agentflow/core';
import type { TaskWorld } from './create-task-world';
import { expertLookup, joinWorldCode, parseWorldActions, queryOf, renderWorldActions } from './world-actions';

/** The mistakes the teacher recovers from (`recoveryRate`), all of them by default. */
export const WORLD_TEACHER_RECOVERIES = ['decoy', 'python'] as const;
export type WorldTeacherRecovery = (typeof WORLD_TEACHER_RECOVERIES)[number];

/**
 * The expert's actions with one mistake that a later step repairs, so the demonstration still
 * answers right, one decision later than the expert:
 * - `decoy`: a lookup whose first hit is a stale entry is not checked at once; the python call
 *   uses the stale value, then the teacher checks that lookup (`Riri cats now`) and runs the
 *   code again with the current value;
 * - `python`: the first python call writes one operand as a name (`Riri_cats+4`), which Python
 *   refuses with `NameError: name 'Riri_cats' is not defined`; the retry is the expert's call.
 * Undefined when the demonstration has no such step (`decoy` needs a stale lookup).
 */
export function withWorldRecovery(
  world: TaskWorld,
  actions: readonly PlannerAction[],
  recovery: WorldTeacherRecovery,
  random: Random,
): PlannerAction[] | undefined {
  const parsed = parseWorldActions(actions);
  // The lookups come in the code's operand order, one per number.
  if (!parsed || parsed.lookups.length !== parsed.numbers.length) return undefined;
  const { lookups, numbers, operators, python, after } = parsed;
  const replaced = (which: number, text: string) => joinWorldCode(numbers.map((number, index) => (index === which ? text : number)), operators);
  if (recovery === 'python') {
    const which = random.int(0, lookups.length - 1);
    const name = queryOf(lookups[which]!.search).replace(/ /g, '_');
    return renderWorldActions(lookups, [{ ...python, action_input: { code: replaced(which, name) } }, python], after);
  }
  const checked = lookups.flatMap((lookup, index) => (lookup.check ? [index] : []));
  if (checked.length === 0) return undefined;
  const which = random.choice(checked);
  const { search, check } = lookups[which]!;
  const staleValue = expertLookup(world, queryOf(search)).staleValue;
  if (staleValue === undefined || !check) return undefined;
  const unchecked = lookups.map((lookup, index) => (index === which ? { search } : lookup));
  return [...renderWorldActions(unchecked, [{ ...python, action_input: { code: replaced(which, staleValue) } }], []), check, python, ...after];
}
