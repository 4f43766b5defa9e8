import type { PlannerAction } from '@agentflow/core';
import type { TaskWorld } from './create-task-world';
import { checkQueryOf, isCheckQuery, isStaleFactText } from './stale-facts';
import { TASK_WORLD_SEARCH_TOOL } from './types';

/** One operand's lookup and, when its first hit was a stale entry, the check that follows it. */
export interface WorldLookup {
  search: PlannerAction;
  check?: PlannerAction;
}

/** A world demonstration's actions by role, so that a mistake can edit one role and render them back. */
export interface WorldActions {
  /** The actions before the python call, one per operand in the code's order. */
  lookups: WorldLookup[];
  python: PlannerAction;
  /** The code's numbers and operators: `11-3` is `['11', '3']` and `['-']`. */
  numbers: string[];
  operators: string[];
  /** The actions after the python call (the finish). */
  after: PlannerAction[];
}

const isPython = (action: PlannerAction) => typeof action.action_input === 'object' && action.action_input !== null && 'code' in action.action_input;

/** The query of a search action (empty for any other action). */
export const queryOf = (action: PlannerAction): string => String((action.action_input as { query?: unknown } | null)?.query ?? '');

/** The code of a python action. */
export const codeOf = (action: PlannerAction): string => String((action.action_input as { code: unknown }).code);

/** Numbers and operators back into code: `['11', '3']`, `['-']` is `11-3`. */
export const joinWorldCode = (numbers: readonly string[], operators: readonly string[]): string =>
  numbers.map((number, index) => (index === 0 ? number : `${operators[index - 1]}${number}`)).join('');

/** Splits a demonstration at its first python call; undefined when it has none. A check query joins the lookup before it. */
export function parseWorldActions(actions: readonly PlannerAction[]): WorldActions | undefined {
  const python = actions.findIndex(isPython);
  if (python < 0) return undefined;
  const lookups: WorldLookup[] = [];
  for (const action of actions.slice(0, python)) {
    const last = lookups[lookups.length - 1];
    if (last && !last.check && isCheckQuery(queryOf(action)) && queryOf(action) === checkQueryOf(queryOf(last.search))) last.check = action;
    else lookups.push({ search: action });
  }
  const code = codeOf(actions[python] as PlannerAction);
  return {
    lookups,
    python: actions[python] as PlannerAction,
    numbers: code.split(/[-+*]/),
    operators: code.split(/\d+/).filter(Boolean),
    after: actions.slice(python + 1),
  };
}

/** The actions of the parts, each python call in `pythons` in turn, then `after` with the finish answering `answer`. */
export function renderWorldActions(lookups: readonly WorldLookup[], pythons: readonly PlannerAction[], after: readonly PlannerAction[], answer?: string): PlannerAction[] {
  return [
    ...lookups.flatMap((lookup) => (lookup.check ? [lookup.search, lookup.check] : [lookup.search])),
    ...pythons,
    ...after.map((action) => (answer !== undefined && action.action === 'finish' ? { ...action, action_input: answer } : action)),
  ];
}

/** The check action of a lookup, as the world's expert writes it. */
export const checkAction = (query: string): PlannerAction => ({ thought: 'check', action: TASK_WORLD_SEARCH_TOOL, action_input: { query: checkQueryOf(query) } });

/** The number in a document's text (each holds one), as text. */
const numberIn = (text: string | undefined) => /\d+/.exec(text ?? '')?.[0];

/**
 * What a lookup of `query` gives an expert who checks stale entries: the value it ends up using,
 * the stale value its first hit showed (when it was stale), and the check it then made.
 */
export function expertLookup(world: TaskWorld, query: string): { value?: string; staleValue?: string; check?: PlannerAction } {
  const first = world.lookup(query)?.text;
  if (first === undefined || !isStaleFactText(first)) return { ...(numberIn(first) === undefined ? {} : { value: numberIn(first) }) };
  const current = numberIn(world.lookup(checkQueryOf(query))?.text);
  return { staleValue: numberIn(first) as string, check: checkAction(query), ...(current === undefined ? {} : { value: current }) };
}
