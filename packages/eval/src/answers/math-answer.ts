import { evaluateArithmetic } from './arithmetic-expression';
import type { Rational } from './rational';

/** Replaces `\frac{a}{b}` (and `\frac ab`) by `((a)/(b))`, innermost first. */
function expandFractions(text: string): string {
  let current = text;
  for (let round = 0; round < 20; round++) {
    const next = current
      .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, '(($1)/($2))')
      .replace(/\\frac\s*(\d)\s*(\d)/g, '(($1)/($2))')
      .replace(/\\sqrt\s*\[([^{}\]]*)\]\s*\{([^{}]*)\}/g, '(($2)^(1/($1)))')
      .replace(/\\sqrt\s*\{([^{}]*)\}/g, 'sqrt($1)')
      .replace(/\\sqrt\s*(\d+|[a-zA-Z])/g, 'sqrt($1)');
    if (next === current) return next;
    current = next;
  }
  return current;
}

/**
 * Turns a LaTeX or plain math answer into plain syntax (`((3)/(4))`, `sqrt(2)`, `2*pi`):
 * drops `$`, `\left`/`\right`, spacing, `\text{...}` units, degree signs and `\%`;
 * unifies `\dfrac`/`\tfrac`; removes thousands separators (`1,000`, `1{,}000`, `1\,000`);
 * keeps only the right side of `x = ...`.
 */
export function latexToPlain(answer: string): string {
  let text = answer
    .trim()
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '')
    .replace(/\\[dt]frac/g, '\\frac')
    .replace(/\\(?:left|right|displaystyle|mathrm|mathbf)(?![a-zA-Z])/g, '')
    .replace(/\^\s*\{?\s*\\circ\s*\}?|°|\\degree/g, '')
    .replace(/\\%|%/g, '')
    .replace(/\\(?:text|mbox|textbf|mathrm)\s*\{[^{}]*\}/g, '')
    .replace(/(\d)\s*(?:\{,\}|\\,|\\!|\\ |,)(?=\d{3}(?!\d))/g, '$1')
    .replace(/\\[,;:! ]|~/g, ' ');
  // Repeat for numbers with several separators (1,000,000).
  text = text.replace(/(\d)(?:\{,\}|,)(?=\d{3}(?!\d))/g, '$1');
  const sides = text.split(/=|\\approx|\\equiv/);
  text = (sides[sides.length - 1] ?? '').trim();
  text = expandFractions(text)
    .replace(/\\(?:cdot|times)/g, '*')
    .replace(/\\div/g, '/')
    .replace(/\\pi(?![a-zA-Z])/g, 'pi')
    .replace(/\\infty/g, 'oo')
    .replace(/[{]/g, '(')
    .replace(/[}]/g, ')')
    .replace(/\s+/g, ' ')
    .trim();
  return text;
}

/** Unit words after a space ("27 miles", "12 cm^2"); never math names or single letters (variables). */
const TRAILING_UNIT = /^(.*?\d)\s+([a-zA-Z]{2,}(?:\s+[a-zA-Z]+)*)(?:\^?\(?\d\)?)?$/;
const MATH_NAMES = /^(?:pi|sqrt|oo|e|i|ln|log|exp|sin|cos|tan)\b/;

/**
 * The exact value of a numeric answer (integers, decimals, fractions, LaTeX fractions,
 * arithmetic of those), or undefined when the answer is symbolic (`sqrt(2)`, `x+1`) or not
 * math at all.
 */
export function parseNumericAnswer(answer: string): Rational | undefined {
  // A final answer is short; a long text is not a number and is not worth a regex pass.
  if (answer.length > 300) return undefined;
  const plain = latexToPlain(answer);
  const direct = evaluateArithmetic(plain);
  if (typeof direct !== 'string') return direct.value;
  const unit = TRAILING_UNIT.exec(plain);
  if (unit?.[1] && unit[2] && !MATH_NAMES.test(unit[2])) {
    const withoutUnit = evaluateArithmetic(unit[1]);
    if (typeof withoutUnit !== 'string') return withoutUnit.value;
  }
  return undefined;
}

/** A canonical string for comparing non-numeric answers: plain syntax, no spaces. */
export function canonicalMathString(answer: string): string {
  return latexToPlain(answer).replace(/\s+/g, '').replace(/^\((.*)\)$/, '$1').toLowerCase();
}
