import { FINISH_ACTION, type Step, type Verdict } from '@agentflow/core';
import type { RuleSettings } from './rule-settings';

/** What the rules read of a step: its action and its tool result. */
export type VerifiedStep = Pick<Step, 'action' | 'toolResult'>;

export interface RuleInput {
  /** Every step so far, the one just taken last. */
  steps: readonly VerifiedStep[];
  /** Time since the task started. */
  elapsedMs: number;
}

/** Canonical text of an action + input: objects with sorted keys, so key order does not hide a repeat. */
function actionKey(step: VerifiedStep): string | undefined {
  if (!step.action) return undefined;
  const sortKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
      );
    }
    return value;
  };
  return JSON.stringify([step.action.action, sortKeys(step.action.action_input)]);
}

/**
 * The rule verdict after the last step, first match wins: a finish action, the step limit,
 * the time limit, the same action repeated verbatim, a streak of tool errors; otherwise continue.
 */
export function ruleVerdict(input: RuleInput, settings: RuleSettings): Verdict {
  const { steps } = input;
  const last = steps[steps.length - 1];
  if (last?.action?.action === FINISH_ACTION) return { stop: true, reason: 'finish_action' };
  if (steps.length >= settings.maxSteps) return { stop: true, reason: 'max_steps' };
  if (input.elapsedMs >= settings.timeLimitMs) return { stop: true, reason: 'timeout' };
  if (last && steps.length >= settings.repeatLimit) {
    const key = actionKey(last);
    const recent = steps.slice(-settings.repeatLimit);
    if (key !== undefined && recent.every((step) => actionKey(step) === key)) {
      return { stop: true, reason: 'repeated_action' };
    }
  }
  let errors = 0;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    if (step.toolResult?.error === undefined) break;
    errors++;
  }
  if (errors >= settings.toolErrorStreak) return { stop: true, reason: 'tool_error_streak' };
  return { stop: false, reason: 'continue' };
}
