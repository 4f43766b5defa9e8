import { stripAnswerInstruction } from '../datasets/benchmark-item';

/** LaTeX commands whose argument is plain text: keep the argument, drop the command. */
const TEXT_COMMANDS = /\\(?:text|textit|textbf|textrm|mathrm|mathbf|mathit|mathcal|mathbb|operatorname|emph|mbox)\s*\{([^{}]*)\}/g;
/** Spacing and sizing commands that carry no content. */
const NOISE_COMMANDS = /\\(?:left|right|big|Big|bigg|Bigg|displaystyle|quad|qquad|[,;:! ])(?![a-zA-Z])/g;

/**
 * Normalises problem text for leakage checks so that copies which differ only in
 * whitespace, case, punctuation or LaTeX markup become equal: the appended answer
 * instruction and `[asy]` figure code are cut, `\dfrac`/`\tfrac` become `\frac`,
 * text and spacing commands are unwrapped, other commands keep their name as a word,
 * thousands separators go, and every run of non-alphanumeric characters becomes one space.
 */
export function normalizeForLeakage(text: string): string {
  return splitMathLetters(stripAnswerInstruction(text).replace(/\[asy\][\s\S]*?\[\/asy\]/g, ' '))
    .replace(/\\[dt]frac/g, '\\frac')
    .replace(TEXT_COMMANDS, ' $1 ')
    .replace(NOISE_COMMANDS, ' ')
    .replace(/(\d)\{,\}(?=\d{3})/g, '$1')
    .replace(/(\d),(?=\d{3}(?!\d))/g, '$1')
    .replace(/\\([a-zA-Z]+)/g, ' $1 ')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** Math segments: `$...$`, `$$...$$`, `\\[...\\]`, `\\(...\\)`. */
const MATH_SEGMENT = /\$\$[\s\S]*?\$\$|\$[^$]*\$|\\\[[\s\S]*?\\\]|\\\([\s\S]*?\\\)/g;

/**
 * Variables are single letters, so `a^2b`, `a^2 b` and `$ABC$` must tokenise alike: inside
 * math every run of letters (not a command name) is split into letters; outside math, runs
 * of 2-6 capitals (point names such as `ABCDEF` written without dollars) are split too.
 */
function splitMathLetters(source: string): string {
  const text = source.replace(/\\([dt]?frac)\s*(\d)\s*(\d)/g, '\\$1{$2}{$3}');
  // Text in capitals throughout is shouting, not point names.
  const shouting = !/[a-z]/.test(text.replace(MATH_SEGMENT, ' '));
  const splitCapitals = (part: string) => (shouting ? part : splitCapitalRuns(part));
  let result = '';
  let last = 0;
  for (const match of text.matchAll(MATH_SEGMENT)) {
    result += splitCapitals(text.slice(last, match.index));
    result += ` ${match[0].replace(/(\\[a-zA-Z]+)|([a-zA-Z]+)/g, (_all, command: string | undefined, letters: string | undefined) =>
      command ? ` ${command} ` : ` ${(letters ?? '').split('').join(' ')} `,
    )} `;
    last = (match.index ?? 0) + match[0].length;
  }
  return result + splitCapitals(text.slice(last));
}

function splitCapitalRuns(text: string): string {
  return text.replace(/(?<![\\a-zA-Z])[A-Z]{2,6}(?![a-zA-Z])/g, (letters) => ` ${letters.split('').join(' ')} `);
}

/** The words of normalised text. */
export function leakageTokens(text: string): string[] {
  const normalized = normalizeForLeakage(text);
  return normalized === '' ? [] : normalized.split(' ');
}
