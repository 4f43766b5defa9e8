import { assertNever } from '@agentflow/core';
import { type ExtractionMethod, extractAnswer, isFormatted } from './extract-answer';
import { checkGameOf24 } from './game-of-24';
import type { LlmJudge } from './llm-judge';
import { canonicalMathString, parseNumericAnswer } from './math-answer';
import { equals, toNumber } from './rational';
import { checkChoice, exactMatch } from './short-answer';
import type { SympyEquivalence } from './sympy-equivalence';

/** How an item's answers are compared. */
export type AnswerFormat =
  /** Numbers, fractions, LaTeX; symbolic equivalence through sympy when the async checker has it. */
  | { type: 'math'; /** Absolute tolerance for numeric answers (default 0: exact). */ tolerance?: number }
  | { type: 'game_of_24'; numbers: number[]; target?: number }
  | { type: 'choice'; choices?: string[] }
  | { type: 'exact_match' }
  /** Only the LLM judge decides (free-form answers). */
  | { type: 'judge' };

export type CheckMethod = 'numeric' | 'string' | 'symbolic' | 'game_of_24' | 'choice' | 'exact_match' | 'quasi_exact_match' | 'judge' | 'none';

export interface AnswerCheck {
  correct: boolean;
  /** The answer found in the response, or null when there was none. */
  extracted: string | null;
  extraction: ExtractionMethod | null;
  /** True when the answer was marked (`<answer>` or `\boxed`), false for a guessed last line. */
  formatted: boolean;
  /** What decided. */
  method: CheckMethod;
  /** True when rules could not decide (symbolic answers without sympy, free text without a judge). */
  undecided: boolean;
  /** Why it is wrong or undecided, in words. */
  detail?: string;
}

/** What a checker needs to know about an item (a BenchmarkItem fits). */
export interface CheckableItem {
  question?: string;
  references: readonly string[];
  numbers?: readonly number[];
  choices?: readonly string[];
}

/** Picks the comparison for an item: Game of 24 by its numbers, choices, math, else exact match. */
export function answerFormatFor(item: CheckableItem): AnswerFormat {
  if (item.numbers && item.numbers.length > 0) return { type: 'game_of_24', numbers: [...item.numbers] };
  if (item.choices && item.choices.length > 0) return { type: 'choice', choices: [...item.choices] };
  const looksMath = item.references.every((reference) => parseNumericAnswer(reference) !== undefined || /[\\^$]/.test(reference));
  return looksMath ? { type: 'math' } : { type: 'exact_match' };
}

function checkMath(extracted: string, references: readonly string[], tolerance: number): Pick<AnswerCheck, 'correct' | 'method' | 'undecided' | 'detail'> {
  const predicted = parseNumericAnswer(extracted);
  let allNumeric = predicted !== undefined;
  for (const reference of references) {
    const expected = parseNumericAnswer(reference);
    if (predicted !== undefined && expected !== undefined) {
      const same = tolerance > 0 ? Math.abs(toNumber(predicted) - toNumber(expected)) <= tolerance : equals(predicted, expected);
      if (same) return { correct: true, method: 'numeric', undecided: false };
    } else {
      allNumeric = false;
    }
    if (canonicalMathString(extracted) === canonicalMathString(reference)) return { correct: true, method: 'string', undecided: false };
  }
  if (allNumeric) return { correct: false, method: 'numeric', undecided: false, detail: `${extracted} differs from ${references.join(' / ')}` };
  return { correct: false, method: 'string', undecided: true, detail: 'not numeric: needs a symbolic check' };
}

/**
 * Checks a response against the references with rules only (no process, no model).
 * Symbolic math that is not string-equal comes back `undecided`; the async checker from
 * `createAnswerChecker` settles it with sympy.
 */
export function checkAnswer(response: string, references: readonly string[], format: AnswerFormat): AnswerCheck {
  const found = extractAnswer(response);
  const base = { extracted: found?.text ?? null, extraction: found?.method ?? null, formatted: isFormatted(found) };
  if (!found || found.text === '') {
    return { ...base, correct: false, method: 'none', undecided: false, detail: 'no answer found in the response' };
  }
  switch (format.type) {
    case 'math':
      return { ...base, ...checkMath(found.text, references, format.tolerance ?? 0) };
    case 'game_of_24': {
      const result = checkGameOf24(found.text, format.numbers, format.target);
      return { ...base, correct: result.correct, method: 'game_of_24', undecided: false, ...(result.reason ? { detail: result.reason } : {}) };
    }
    case 'choice': {
      const correct = references.some((reference) => checkChoice(found.text, reference, format.choices));
      return { ...base, correct, method: 'choice', undecided: false };
    }
    case 'exact_match': {
      const correct = exactMatch(found.text, references);
      return { ...base, correct, method: 'exact_match', undecided: false };
    }
    case 'judge':
      return { ...base, correct: false, method: 'judge', undecided: true, detail: 'needs the LLM judge' };
    default:
      return assertNever(format, 'answer format');
  }
}

export interface AnswerCheckerSettings {
  /** Symbolic equivalence (`createSympyEquivalence()`); omit to compare symbolic answers as strings. */
  sympy?: SympyEquivalence;
  /** Consulted for `judge` items, and for exact-match or symbolic answers that rules could not accept. */
  judge?: LlmJudge;
}

export interface AnswerChecker {
  check(response: string, item: CheckableItem, format?: AnswerFormat): Promise<AnswerCheck>;
}

/** Rules first, then sympy for undecided math, then the LLM judge where one is configured. */
export function createAnswerChecker(settings: AnswerCheckerSettings = {}): AnswerChecker {
  return {
    async check(response, item, format = answerFormatFor(item)) {
      let result = checkAnswer(response, item.references, format);
      if (result.undecided && format.type === 'math' && result.extracted !== null) {
        if (settings.sympy) {
          const extracted = result.extracted;
          const outcome = await settings.sympy.compare(item.references.map((reference) => [extracted, reference] as const));
          if (outcome.status === 'ok') {
            const decided = outcome.results.some((value) => value !== null);
            result = { ...result, method: 'symbolic', correct: outcome.results.some((value) => value === true), undecided: !decided };
            if (decided) delete result.detail;
            else result.detail = 'sympy could not parse the answer or the reference';
          } else {
            result = { ...result, detail: `symbolic check unavailable (${outcome.reason}); compared as strings` };
          }
        } else {
          result = { ...result, detail: 'symbolic check not configured; compared as strings' };
        }
      }
      const judgeable = format.type === 'judge' || (!result.correct && (result.undecided || format.type === 'exact_match'));
      if (settings.judge && judgeable && result.extracted !== null) {
        const verdict = await settings.judge.judge(item.question ?? '', item.references.join(' / '), response);
        if (verdict.status === 'ok') {
          result = { ...result, correct: verdict.verdict.correct, method: 'judge', undecided: false, detail: verdict.verdict.analysis };
        } else {
          result = { ...result, detail: verdict.reason };
        }
      }
      return result;
    },
  };
}
