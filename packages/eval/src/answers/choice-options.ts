import { normalizeShortAnswer } from './short-answer';

/** Option letters in order: A is the first option. */
export const CHOICE_LETTERS = 'ABCDEFGHIJ';

/** One option of a multiple-choice item. */
export interface ChoiceOption {
  /** A, B, C... by position. */
  letter: string;
  /** The option without its letter. */
  text: string;
}

/**
 * Options as benchmark files list them, with or without their letters: `["A. 0.9", "B. 0.7"]`
 * (GPQA, MedQA in AgentFlow's files) or `["0.9", "0.7"]`. A leading `A.`, `A)` or `(A)` is split
 * off only when every option carries the letter of its position, so an option that merely starts
 * with a capital ("B cells") keeps its text.
 */
export function letteredOptions(choices: readonly string[]): ChoiceOption[] {
  const prefix = /^\s*\(?([A-J])[.)]\s*/;
  const lettered =
    choices.length > 0 && choices.length <= CHOICE_LETTERS.length && choices.every((choice, index) => prefix.exec(choice)?.[1] === CHOICE_LETTERS[index]);
  return choices.map((choice, index) => ({
    letter: CHOICE_LETTERS[index] ?? String(index + 1),
    text: (lettered ? choice.replace(prefix, '') : choice).trim(),
  }));
}

/** The options as the paper's judge lists them, one `X. text` per option. */
export function formatChoiceOptions(choices: readonly string[]): string[] {
  return letteredOptions(choices).map((option) => `${option.letter}. ${option.text}`);
}

/** Whitespace collapsed and case folded: how option texts of one file are compared with each other. */
const squash = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The position of the one option whose text equals `text` (as listed, then SQuAD-normalised); undefined for none or several. */
function optionWithText(text: string, options: readonly ChoiceOption[]): number | undefined {
  for (const normalize of [squash, normalizeShortAnswer]) {
    const wanted = normalize(text);
    const matches = options.flatMap((option, index) => (normalize(option.text) === wanted || normalize(`${option.letter}. ${option.text}`) === wanted ? [index] : []));
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) return undefined;
  }
  return undefined;
}

/** A letter among the options' (A to the last), as a position; undefined otherwise. */
function letterPosition(letter: string | undefined, options: readonly ChoiceOption[]): number | undefined {
  if (letter === undefined) return undefined;
  const position = CHOICE_LETTERS.indexOf(letter);
  return position >= 0 && position < options.length ? position : undefined;
}

/**
 * The position of the option a reference answer names (0 is A), or undefined when it names none
 * or several: the option as listed (`"A. 0.9"`, GPQA's answers), its text (`"Colorectal cancer"`,
 * MedQA's answers), or a lone letter (`"C"`, `"(C)"`). Texts are compared with whitespace
 * collapsed and case folded, then SQuAD-normalised if that alone is unambiguous.
 */
export function choiceIndexOf(reference: string, choices: readonly string[]): number | undefined {
  const options = letteredOptions(choices);
  const letter = /^\s*\(?([A-J])\)?\.?\s*$/.exec(reference)?.[1];
  return letter !== undefined ? letterPosition(letter, options) : optionWithText(reference, options);
}

/**
 * The option an answer picks, as a position (0 is A), by rules: a lone letter (`C`, `(C)`, `C.`),
 * a letter that starts the answer (`C. Colorectal cancer`, `C) ...`; the letter wins when the
 * text disagrees, as the paper's extraction prompt says), a capital letter after "answer",
 * "option" or "choice" (`The answer is C`), else the text of exactly one option. Undefined when
 * none of these finds an option of this item.
 */
export function pickedChoiceIndex(answer: string, choices: readonly string[]): number | undefined {
  const options = letteredOptions(choices);
  const text = answer.trim();
  const patterns = [/^\(?([A-J])\)?[.:]?$/, /^\(?([A-J])[.):]\s/, /\b(?:[Aa]nswer|[Oo]ption|[Cc]hoice)\s*(?:is|:)?\s*\(?([A-J])\)?(?![\w])/];
  for (const pattern of patterns) {
    const position = letterPosition(pattern.exec(text)?.[1], options);
    if (position !== undefined) return position;
  }
  return optionWithText(text, options);
}
