import { evaluateArithmetic } from './arithmetic-expression';
import { equals, formatRational, rational, type Rational } from './rational';

export interface GameOf24Result {
  correct: boolean;
  /** Why the expression was rejected, when it was. */
  reason?: string;
}

/**
 * Checks a Game of 24 answer by evaluating it, not by comparing strings (answers are not
 * unique): only `+ - * /` (also `×`, `÷`) and parentheses, each given number used exactly
 * once, exact rational arithmetic, result 24. A trailing `= 24` is accepted.
 */
export function checkGameOf24(expression: string, numbers: readonly number[], target = 24): GameOf24Result {
  const cleaned = expression
    .replace(/\\times|\\cdot/g, '*')
    .replace(/\\div/g, '/')
    .replace(/\$/g, '')
    .replace(/\s*=\s*-?\d+(\.\d+)?\s*$/, '')
    .replace(/^\s*-?\d+(\.\d+)?\s*=\s*/, '')
    .trim();
  if (cleaned === '') return { correct: false, reason: 'empty expression' };
  const result = evaluateArithmetic(cleaned, { allowUnaryMinus: false, allowPower: false });
  if (typeof result === 'string') return { correct: false, reason: result };
  const given = numbers.map((value) => rational(BigInt(Math.round(value))) as Rational);
  const remaining = [...given];
  for (const literal of result.literals) {
    const position = remaining.findIndex((value) => equals(value, literal));
    if (position < 0) {
      const used = result.literals.map(formatRational).join(', ');
      return { correct: false, reason: `uses ${formatRational(literal)} more often than given (used ${used}; given ${numbers.join(', ')})` };
    }
    remaining.splice(position, 1);
  }
  if (remaining.length > 0) {
    return { correct: false, reason: `does not use ${remaining.map(formatRational).join(', ')}` };
  }
  const expected = rational(BigInt(target)) as Rational;
  if (!equals(result.value, expected)) {
    return { correct: false, reason: `evaluates to ${formatRational(result.value)}, not ${target}` };
  }
  return { correct: true };
}
