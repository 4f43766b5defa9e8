import { AgentFlowError, type Demonstration, describeValue, type PlannerAction, type Random } from '@agentflow/core';
import type { TaskWorld } from './create-task-world';
import { ATTRIBUTES } from './templates';
import { expertLookup, joinWorldCode, parseWorldActions, queryOf, renderWorldActions } from './world-actions';
import { WORLD_TEACHER_RECOVERIES, type WorldTeacherRecovery, withWorldRecovery } from './world-recoveries';

/** The kinds of mistake the imperfect expert makes by default, one per flawed demonstration. */
export const WORLD_TEACHER_MISTAKES = ['operator', 'lookup'] as const;
/**
 * A mistake the teacher does not recover from: `operator` and `lookup` (`WORLD_TEACHER_MISTAKES`,
 * the default), and `decoy`, which needs a world with `decoyRate` and is asked for by name.
 */
export type WorldTeacherMistake = (typeof WORLD_TEACHER_MISTAKES)[number] | 'decoy';

export interface WorldTeacherSettings {
  /** Fraction of the demonstrations that carry a mistake (0: the exact expert). */
  errorRate: number;
  /** The mistakes drawn from, one per flawed demonstration. Default `WORLD_TEACHER_MISTAKES` (operator, lookup). */
  mistakes?: readonly WorldTeacherMistake[];
  /**
   * Fraction of the demonstrations that make a mistake and recover from it, so still answer
   * right (`withWorldRecovery`). Default 0. With `errorRate` at most 1 in all: one draw decides
   * between a mistake, a recovery and the exact expert.
   */
  recoveryRate?: number;
  /** The recoveries drawn from, among those the demonstration allows. Default `WORLD_TEACHER_RECOVERIES` (decoy, python). */
  recoveries?: readonly WorldTeacherRecovery[];
  /** The teacher's random source; draws happen in the order tasks are asked for. */
  random: Random;
}

/** One demonstration of the teacher: its actions, ending with `finish`, and whether they are the exact expert's (core's `Demonstration`). */
export type WorldTeacherDemonstration = Demonstration;

/** What Python prints for the world's code: integers joined by `+`, `-` and `*`, with `*` first. */
export function evaluateWorldCode(code: string): number {
  return code.split(/(?=[-+])/).reduce((sum, term) => {
    const sign = term.startsWith('-') ? -1 : 1;
    return sum + sign * term.replace(/^[-+]/, '').split('*').reduce((product, factor) => product * Number(factor), 1);
  }, 0);
}

/** True when the demonstration checks a stale entry, so a `decoy` mistake or recovery has something to skip. */
const checksAStaleEntry = (actions: readonly PlannerAction[]) => parseWorldActions(actions)?.lookups.some((lookup) => lookup.check) ?? false;

/**
 * The expert's actions with one mistake of the kind a weak teacher makes, and the answer
 * that mistake leads to:
 * - `operator`: the python code uses another operator (`5-3` becomes `5+3` or `5*3`);
 * - `lookup`: one search asks for another counted thing of the same entity (`Pesok dogs`
 *   for a question about hens) and the code uses the count it found (checked, if stale);
 * - `decoy`: a lookup whose first hit is a stale entry is not checked, and the code uses the
 *   stale value.
 * Undefined when the demonstration has no such step (then it stays exact).
 */
export function withWorldMistake(
  world: TaskWorld,
  actions: readonly PlannerAction[],
  mistake: WorldTeacherMistake,
  random: Random,
): PlannerAction[] | undefined {
  const parsed = parseWorldActions(actions);
  if (!parsed) return undefined;
  const lookups = [...parsed.lookups];
  let { numbers, operators } = parsed;
  if (mistake === 'operator') {
    operators = operators.map((operator) => random.choice(['+', '-', '*'].filter((candidate) => candidate !== operator)));
  } else {
    // The lookups come in the code's operand order, one per number.
    if (lookups.length !== numbers.length) return undefined;
    let which: number;
    let value: string | undefined;
    if (mistake === 'lookup') {
      which = random.int(0, lookups.length - 1);
      const [entity, attribute] = queryOf(lookups[which]!.search).split(' ') as [string, string];
      // Another counted thing than any this demonstration looks up for the entity (a repeated search would end the run).
      const queries = new Set(lookups.map((lookup) => queryOf(lookup.search)));
      const others = ATTRIBUTES.filter((candidate) => candidate !== attribute && !queries.has(`${entity} ${candidate}`));
      if (others.length === 0) return undefined;
      const wrongQuery = `${entity} ${random.choice(others)}`;
      const found = expertLookup(world, wrongQuery);
      value = found.value;
      const search = { ...lookups[which]!.search, thought: `find ${wrongQuery}`, action_input: { query: wrongQuery } };
      lookups[which] = found.check ? { search, check: found.check } : { search };
    } else {
      const checked = lookups.flatMap((lookup, index) => (lookup.check ? [index] : []));
      if (checked.length === 0) return undefined;
      which = random.choice(checked);
      value = expertLookup(world, queryOf(lookups[which]!.search)).staleValue;
      lookups[which] = { search: lookups[which]!.search };
    }
    if (value === undefined) return undefined;
    numbers = numbers.map((number, index) => (index === which ? (value as string) : number));
  }
  const wrongCode = joinWorldCode(numbers, operators);
  return renderWorldActions(lookups, [{ ...parsed.python, action_input: { code: wrongCode } }], parsed.after, String(evaluateWorldCode(wrongCode)));
}

function checkRate(name: string, rate: number): void {
  if (!(rate >= 0 && rate <= 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `The world teacher's ${name} must be in [0, 1], got ${describeValue(rate)}.` });
  }
}

/**
 * An imperfect teacher for the world, as real SFT data is: each demonstration carries one
 * mistake with probability `errorRate` (and answers what the mistake leads to), one recovered
 * mistake with probability `recoveryRate` (and answers right), else it is the exact expert's.
 * A kind the demonstration does not allow (`decoy` where no lookup was stale) is not drawn;
 * where none is left, the demonstration stays exact. Ask for tasks in a fixed order: the draws
 * follow it.
 */
export function createWorldTeacher(world: TaskWorld, settings: WorldTeacherSettings): (taskId: string) => WorldTeacherDemonstration {
  const kinds = settings.mistakes ?? WORLD_TEACHER_MISTAKES;
  const recoveries = settings.recoveries ?? WORLD_TEACHER_RECOVERIES;
  const recoveryRate = settings.recoveryRate ?? 0;
  checkRate('recoveryRate', recoveryRate);
  if (settings.errorRate + recoveryRate > 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The world teacher's errorRate (${settings.errorRate}) and recoveryRate (${recoveryRate}) add up to more than 1; lower one of them.`,
    });
  }
  return (taskId) => {
    const exact = world.demonstration(taskId).steps.map((step) => step.action);
    if (settings.errorRate <= 0 && recoveryRate <= 0) return { actions: exact, exact: true };
    const draw = settings.random.next();
    const allowed = <Kind extends string>(list: readonly Kind[]) => list.filter((kind) => kind !== 'decoy' || checksAStaleEntry(exact));
    if (draw < settings.errorRate) {
      const mistakes = allowed(kinds);
      const flawed = mistakes.length > 0 ? withWorldMistake(world, exact, settings.random.choice(mistakes), settings.random) : undefined;
      return flawed ? { actions: flawed, exact: false } : { actions: exact, exact: true };
    }
    if (draw < settings.errorRate + recoveryRate) {
      const possible = allowed(recoveries);
      const recovered = possible.length > 0 ? withWorldRecovery(world, exact, settings.random.choice(possible), settings.random) : undefined;
      return recovered ? { actions: recovered, exact: false } : { actions: exact, exact: true };
    }
    return { actions: exact, exact: true };
  };
}
