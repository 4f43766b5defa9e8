import { describe, expect, it } from 'vitest';
import { evaluateArithmetic } from './arithmetic-expression';
import { canonicalMathString, latexToPlain, parseNumericAnswer } from './math-answer';
import { formatRational } from './rational';

const value = (text: string) => {
  const parsed = parseNumericAnswer(text);
  return parsed === undefined ? undefined : formatRational(parsed);
};

describe('numeric answers', () => {
  it('reads integers, decimals and signs exactly', () => {
    expect(value('033')).toBe('33');
    expect(value('-4')).toBe('-4');
    expect(value('0.25')).toBe('1/4');
  });

  it('reads LaTeX fractions in every spelling', () => {
    for (const text of ['\\frac{3}{4}', '\\dfrac{3}{4}', '\\tfrac34', '$\\frac{6}{8}$', '3/4', '\\left(\\frac{3}{4}\\right)', '0.75']) {
      expect(value(text), text).toBe('3/4');
    }
    expect(value('-\\frac{1}{2}')).toBe('-1/2');
    expect(value('\\frac{\\frac{1}{2}}{2}')).toBe('1/4');
  });

  it('drops thousands separators, units, degrees, percent and a leading "x ="', () => {
    for (const text of ['1,000,000', '1{,}000{,}000', '1\\,000\\,000', '1000000']) expect(value(text), text).toBe('1000000');
    expect(value('336^\\circ')).toBe('336');
    expect(value('336°')).toBe('336');
    expect(value('27 \\text{ miles}')).toBe('27');
    expect(value('27 miles')).toBe('27');
    expect(value('50\\%')).toBe('50');
    expect(value('x = 5')).toBe('5');
    expect(value('2 \\times 3 + 2^{3}')).toBe('14');
  });

  it('says undefined for symbolic or non-math answers', () => {
    expect(value('\\sqrt{2}')).toBeUndefined();
    expect(value('2\\pi')).toBeUndefined();
    expect(value('Paris')).toBeUndefined();
    expect(value('')).toBeUndefined();
  });

  it('turns LaTeX into plain syntax for sympy and string comparison', () => {
    expect(latexToPlain('\\frac{\\sqrt{3}}{2}')).toBe('((sqrt(3))/(2))');
    expect(latexToPlain('2\\pi r')).toBe('2pi r');
    expect(canonicalMathString('$ \\dfrac{a}{ b } $')).toBe(canonicalMathString('\\frac{a}{b}'));
  });
});

describe('evaluateArithmetic', () => {
  it('never throws on hostile input', () => {
    expect(evaluateArithmetic('1/0')).toBe('division by zero');
    expect(evaluateArithmetic('9^99999')).toMatch(/small integer powers/);
    expect(evaluateArithmetic('('.repeat(200) + '1' + ')'.repeat(200))).toMatch(/nested too deeply/);
    expect(evaluateArithmetic('1+')).toMatch(/ends too early/);
    expect(evaluateArithmetic('2 3')).toMatch(/after a complete expression/);
    expect(evaluateArithmetic('import os')).toMatch(/unexpected character/);
    expect(typeof evaluateArithmetic('1'.repeat(600))).toBe('string');
    expect(evaluateArithmetic('((9^64)^64)^64')).toMatch(/small integer powers/);
    expect(parseNumericAnswer(`1 ${'a '.repeat(5000)}!`)).toBeUndefined();
  });
});
