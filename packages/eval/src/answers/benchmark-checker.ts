import { assertNever } from '@agentflow/core';
import { type AnswerCheck, answerFormatFor, type CheckableItem, checkAnswer } from './check-answer';
import { choiceIndexOf, CHOICE_LETTERS, pickedChoiceIndex } from './choice-options';
import { extractAnswer, isFormatted } from './extract-answer';
import { gaiaQuasiExactMatch } from './gaia-answer';
import { tokenF1 } from './qa-f1';

/**
 * The rule checker of a benchmark, without a model: `math` (numbers, fractions, LaTeX),
 * `game_of_24` (the expression evaluated), `exact_match_f1` (SQuAD-normalised exact match over
 * the accepted answers, with token F1 beside it), `quasi_exact_match` (GAIA's own scorer) and
 * `choice_letter` (the option picked against the right one).
 */
export type BenchmarkCheckerName = 'math' | 'game_of_24' | 'exact_match_f1' | 'quasi_exact_match' | 'choice_letter';

/** An item as the benchmark checkers read it (a BenchmarkItem fits). */
export interface BenchmarkCheckableItem extends CheckableItem {
  /** Multiple choice: the position of the right option in `choices` (0 is A); else found from the references. */
  answerIndex?: number;
}

/** A rule check with the token F1 of QA answers beside it. */
export interface BenchmarkCheck extends AnswerCheck {
  /** `exact_match_f1`: the best token F1 over the accepted answers (0 without an answer); null for other checkers. */
  f1: number | null;
}

function checkChoiceLetter(response: string, item: BenchmarkCheckableItem): AnswerCheck {
  const found = extractAnswer(response);
  const base = { extracted: found?.text ?? null, extraction: found?.method ?? null, formatted: isFormatted(found), method: 'choice' as const, undecided: false };
  if (!found || found.text === '') return { ...base, method: 'none', correct: false, detail: 'no answer found in the response' };
  const choices = item.choices ?? [];
  const right = item.answerIndex ?? item.references.map((reference) => choiceIndexOf(reference, choices)).find((index) => index !== undefined);
  const picked = pickedChoiceIndex(found.text, choices);
  if (picked === undefined) return { ...base, correct: false, detail: `picks none of the ${choices.length} options` };
  const letter = (index: number | undefined) => (index === undefined ? '?' : (CHOICE_LETTERS[index] ?? '?'));
  return picked === right ? { ...base, correct: true } : { ...base, correct: false, detail: `picks ${letter(picked)}, the answer is ${letter(right)}` };
}

/**
 * Checks a response with a benchmark's rule checker; `null` picks by the item as
 * `answerFormatFor` does (a file that is no known benchmark). Never throws, calls no model.
 */
export function checkBenchmarkAnswer(response: string, item: BenchmarkCheckableItem, checker: BenchmarkCheckerName | null): BenchmarkCheck {
  switch (checker) {
    case null:
      return { ...checkAnswer(response, item.references, answerFormatFor(item)), f1: null };
    case 'math':
      return { ...checkAnswer(response, item.references, { type: 'math' }), f1: null };
    case 'game_of_24':
      return { ...checkAnswer(response, item.references, answerFormatFor(item)), f1: null };
    case 'exact_match_f1': {
      const check = checkAnswer(response, item.references, { type: 'exact_match' });
      return { ...check, f1: check.extracted === null ? 0 : tokenF1(check.extracted, item.references) };
    }
    case 'quasi_exact_match': {
      const check = checkAnswer(response, item.references, { type: 'exact_match' });
      if (check.extracted === null || check.method === 'none') return { ...check, f1: null };
      const extracted = check.extracted;
      return { ...check, method: 'quasi_exact_match', correct: item.references.some((reference) => gaiaQuasiExactMatch(extracted, reference)), f1: null };
    }
    case 'choice_letter':
      return { ...checkChoiceLetter(response, item), f1: null };
    default:
      return assertNever(checker, 'benchmark checker');
  }
}
