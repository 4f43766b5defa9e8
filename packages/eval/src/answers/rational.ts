/** An exact fraction with a positive denominator, always in lowest terms. */
export interface Rational {
  numerator: bigint;
  denominator: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** Builds a rational in lowest terms; undefined for a zero denominator. */
export function rational(numerator: bigint, denominator = 1n): Rational | undefined {
  if (denominator === 0n) return undefined;
  const sign = denominator < 0n ? -1n : 1n;
  const divisor = gcd(numerator, denominator) || 1n;
  return { numerator: (sign * numerator) / divisor, denominator: (sign * denominator) / divisor };
}

/** Parses a plain decimal literal (`12`, `3.25`, `.5`) exactly. */
export function parseDecimal(text: string): Rational | undefined {
  const match = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[1] === '' && (match[2] ?? '') === '')) return undefined;
  const fraction = match[2] ?? '';
  return rational(BigInt(`${match[1] || '0'}${fraction}`), 10n ** BigInt(fraction.length));
}

export const add = (a: Rational, b: Rational) => rational(a.numerator * b.denominator + b.numerator * a.denominator, a.denominator * b.denominator) as Rational;
export const subtract = (a: Rational, b: Rational) => rational(a.numerator * b.denominator - b.numerator * a.denominator, a.denominator * b.denominator) as Rational;
export const multiply = (a: Rational, b: Rational) => rational(a.numerator * b.numerator, a.denominator * b.denominator) as Rational;
/** Undefined when dividing by zero. */
export const divide = (a: Rational, b: Rational) => rational(a.numerator * b.denominator, a.denominator * b.numerator);

/** Bits of a bigint's magnitude, roughly. */
const bits = (value: bigint) => (value < 0n ? -value : value).toString(16).length * 4;

/** Largest result of a power, in bits: far beyond any answer, small enough to compute at once. */
const MAX_POWER_BITS = 4096;

/**
 * Integer powers only, with |exponent| <= 64 and a result of at most 4096 bits, so that a
 * hostile `9^99999` or `((9^64)^64)^64` cannot stall the checker.
 */
export function power(base: Rational, exponent: Rational): Rational | undefined {
  if (exponent.denominator !== 1n || exponent.numerator > 64n || exponent.numerator < -64n) return undefined;
  const magnitude = exponent.numerator < 0n ? -exponent.numerator : exponent.numerator;
  if (Math.max(bits(base.numerator), bits(base.denominator)) * Number(magnitude) > MAX_POWER_BITS) return undefined;
  const raised = rational(base.numerator ** magnitude, base.denominator ** magnitude) as Rational;
  return exponent.numerator < 0n ? divide({ numerator: 1n, denominator: 1n }, raised) : raised;
}

export const equals = (a: Rational, b: Rational) => a.numerator === b.numerator && a.denominator === b.denominator;
export const toNumber = (value: Rational) => Number(value.numerator) / Number(value.denominator);
export const formatRational = (value: Rational) =>
  value.denominator === 1n ? String(value.numerator) : `${value.numerator}/${value.denominator}`;
