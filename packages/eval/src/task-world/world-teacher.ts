import type { Demonstration, PlannerAction, Random } from '@agentflow/core';
import type { TaskWorld } from './create-task-world';
import { ATTRIBUTES } from './templates';

/** The kinds of mistake the imperfect expert makes, one per flawed demonstration. */
export const WORLD_TEACHER_MISTAKES = ['operator', 'lookup'] as const;
export type WorldTeacherMistake = (typeof WORLD_TEACHER_MISTAKES)[number];

export interface WorldTeacherSettings {
  /** Fraction of the demonstrations that carry a mistake (0: the exact expert). */
  errorRate: number;
  /** The mistakes drawn from, one per flawed demonstration. Default both. */
  mistakes?: readonly WorldTeacherMistake[];
  /** The teacher's random source; draws happen in the order tasks are asked for. */
  random: Random;
}

/** One demonstration of the teacher: its actions, ending with `finish`, and whether they are the exact expert's (core's `Demonstration`). */
export type WorldTeacherDemonstration = Demonstration;

const isPython = (action: PlannerAction) => typeof action.action_input === 'object' && action.action_input !== null && 'code' in action.action_input;

/** What Python prints for the world's code: integers joined by `+`, `-` and `*`, with `*` first. */
export function evaluateWorldCode(code: string): number {
  return code.split(/(?=[-+])/).reduce((sum, term) => {
    const sign = term.startsWith('-') ? -1 : 1;
    return sum + sign * term.replace(/^[-+]/, '').split('*').reduce((product, factor) => product * Number(factor), 1);
  }, 0);
}

/**
 * The expert's actions with one mistake of the kind a weak teacher makes, and the answer
 * that mistake leads to:
 * - `operator`: the python code uses another operator (`5-3` becomes `5+3` or `5*3`);
 * - `lookup`: one search asks for another counted thing of the same entity (`Pesok dogs`
 *   for a question about hens) and the code uses the count it found.
 * Undefined when the demonstration has no such step (then it stays exact).
 */
export function withWorldMistake(
  world: TaskWorld,
  actions: readonly PlannerAction[],
  mistake: WorldTeacherMistake,
  random: Random,
): PlannerAction[] | undefined {
  const python = actions.findIndex(isPython);
  if (python < 0) return undefined;
  const code = String((actions[python]!.action_input as { code: unknown }).code);
  let numbers = code.split(/[-+*]/);
  let operators = code.split(/\d+/).filter(Boolean);
  const edits = new Map<number, PlannerAction>();
  if (mistake === 'operator') {
    operators = operators.map((operator) => random.choice(['+', '-', '*'].filter((candidate) => candidate !== operator)));
  } else {
    // The searches come in the code's operand order, one per number.
    const searches = actions.flatMap((action, index) => (index < python && !isPython(action) && action.action !== 'finish' ? [index] : []));
    if (searches.length !== numbers.length) return undefined;
    const queryOf = (index: number) => String((actions[index]!.action_input as { query: unknown }).query);
    const which = random.int(0, searches.length - 1);
    const [entity, attribute] = queryOf(searches[which]!).split(' ') as [string, string];
    // Another counted thing than any this demonstration looks up for the entity (a repeated search would end the run).
    const queries = new Set(searches.map(queryOf));
    const others = ATTRIBUTES.filter((candidate) => candidate !== attribute && !queries.has(`${entity} ${candidate}`));
    if (others.length === 0) return undefined;
    const wrongQuery = `${entity} ${random.choice(others)}`;
    const value = /\d+/.exec(world.corpus.find((document) => document.title === wrongQuery)?.text ?? '')?.[0];
    if (value === undefined) return undefined;
    numbers = numbers.map((number, index) => (index === which ? value : number));
    edits.set(searches[which]!, { ...actions[searches[which]!]!, thought: `find ${wrongQuery}`, action_input: { query: wrongQuery } });
  }
  const wrongCode = numbers.map((number, index) => (index === 0 ? number : `${operators[index - 1]}${number}`)).join('');
  edits.set(python, { ...actions[python]!, action_input: { code: wrongCode } });
  const answer = String(evaluateWorldCode(wrongCode));
  return actions.map((action, index) => edits.get(index) ?? (index > python && action.action === 'finish' ? { ...action, action_input: answer } : action));
}

/**
 * An imperfect teacher for the world, as real SFT data is: each demonstration carries one
 * mistake with probability `errorRate` (and answers what the mistake leads to), else it is
 * the exact expert's. Ask for tasks in a fixed order: the draws follow it.
 */
export function createWorldTeacher(world: TaskWorld, settings: WorldTeacherSettings): (taskId: string) => WorldTeacherDemonstration {
  const kinds = settings.mistakes ?? WORLD_TEACHER_MISTAKES;
  return (taskId) => {
    const exact = world.demonstration(taskId).steps.map((step) => step.action);
    if (settings.errorRate <= 0 || !(settings.random.next() < settings.errorRate)) return { actions: exact, exact: true };
    const flawed = withWorldMistake(world, exact, settings.random.choice(kinds), settings.random);
    return flawed ? { actions: flawed, exact: false } : { actions: exact, exact: true };
  };
}
