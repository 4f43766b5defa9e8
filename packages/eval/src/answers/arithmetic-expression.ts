import { add, divide, multiply, parseDecimal, power, type Rational, subtract } from './rational';

/** What an arithmetic expression evaluated to, and which literals it used. */
export interface ArithmeticResult {
  value: Rational;
  /** The number literals in the order they appear. */
  literals: Rational[];
  usedUnaryMinus: boolean;
  usedPower: boolean;
}

export interface ArithmeticSettings {
  /** Accept `-x` (default true). */
  allowUnaryMinus?: boolean;
  /** Accept `^` and `**` (default true). */
  allowPower?: boolean;
}

type Token = { kind: 'number'; value: Rational } | { kind: 'operator'; value: string };

const OPERATOR_ALIASES: Record<string, string> = { '×': '*', '·': '*', '∗': '*', '÷': '/', '−': '-', '–': '-', '**': '^' };

function tokenize(text: string): Token[] | string {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+\.?\d*|\.\d+)|(\*\*|[-+*/^()[\]×÷·∗−–]))/y;
  let position = 0;
  while (position < text.length) {
    if (/^\s*$/.test(text.slice(position))) break;
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match) return `unexpected character ${JSON.stringify(text.slice(position).trim()[0])} at ${position}`;
    position = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: parseDecimal(match[1]) as Rational });
    else {
      const raw = match[2] as string;
      const value = OPERATOR_ALIASES[raw] ?? raw;
      tokens.push({ kind: 'operator', value: value === '[' ? '(' : value === ']' ? ')' : value });
    }
  }
  return tokens;
}

/**
 * Evaluates `+ - * / ^` and parentheses over exact rationals (`×`, `÷`, `·`, `**` and
 * brackets accepted). Returns an error string, never throws: the input is model output.
 */
export function evaluateArithmetic(text: string, settings: ArithmeticSettings = {}): ArithmeticResult | string {
  const { allowUnaryMinus = true, allowPower = true } = settings;
  if (text.length > 500) return 'expression longer than 500 characters';
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return tokens;
  let index = 0;
  const literals: Rational[] = [];
  let usedUnaryMinus = false;
  let usedPower = false;
  const peek = () => tokens[index];
  const isOperator = (value: string) => {
    const token = peek();
    return token?.kind === 'operator' && token.value === value;
  };

  const expression = (depth: number): Rational | string => {
    if (depth > 100) return 'expression nested too deeply';
    let left = term(depth);
    while (typeof left !== 'string' && (isOperator('+') || isOperator('-'))) {
      const operator = (tokens[index++] as Token).value;
      const right = term(depth);
      if (typeof right === 'string') return right;
      left = operator === '+' ? add(left, right) : subtract(left, right);
    }
    return left;
  };
  const term = (depth: number): Rational | string => {
    let left = unary(depth);
    while (typeof left !== 'string' && (isOperator('*') || isOperator('/'))) {
      const operator = (tokens[index++] as Token).value;
      const right = unary(depth);
      if (typeof right === 'string') return right;
      const next = operator === '*' ? multiply(left, right) : divide(left, right);
      if (!next) return 'division by zero';
      left = next;
    }
    return left;
  };
  const unary = (depth: number): Rational | string => {
    if (isOperator('-') || isOperator('+')) {
      const operator = (tokens[index++] as Token).value;
      if (operator === '-') {
        if (!allowUnaryMinus) return 'unary minus is not allowed';
        usedUnaryMinus = true;
      }
      const operand = unary(depth + 1);
      if (typeof operand === 'string') return operand;
      return operator === '-' ? subtract({ numerator: 0n, denominator: 1n }, operand) : operand;
    }
    return exponentiation(depth);
  };
  const exponentiation = (depth: number): Rational | string => {
    const base = primary(depth);
    if (typeof base === 'string' || !isOperator('^')) return base;
    if (!allowPower) return 'powers are not allowed';
    usedPower = true;
    index++;
    const exponent = unary(depth + 1);
    if (typeof exponent === 'string') return exponent;
    return power(base, exponent) ?? 'only small integer powers are supported';
  };
  const primary = (depth: number): Rational | string => {
    const token = tokens[index++];
    if (!token) return 'expression ends too early';
    if (token.kind === 'number') {
      literals.push(token.value);
      return token.value;
    }
    if (token.value === '(') {
      const inner = expression(depth + 1);
      if (typeof inner === 'string') return inner;
      if (!isOperator(')')) return 'missing closing parenthesis';
      index++;
      return inner;
    }
    return `unexpected ${JSON.stringify(token.value)}`;
  };

  const value = expression(0);
  if (typeof value === 'string') return value;
  if (index < tokens.length) return `unexpected ${JSON.stringify((tokens[index] as Token).kind === 'number' ? 'number' : (tokens[index] as Token).value)} after a complete expression`;
  return { value, literals, usedUnaryMinus, usedPower };
}
