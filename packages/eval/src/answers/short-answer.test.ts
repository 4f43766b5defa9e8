import { describe, expect, it } from 'vitest';
import { checkChoice, exactMatch, extractChoice, normalizeShortAnswer } from './short-answer';

describe('short answers', () => {
  it('normalises case, punctuation, articles and accents', () => {
    expect(normalizeShortAnswer('  The Seine!  ')).toBe('seine');
    expect(normalizeShortAnswer('Zürich')).toBe('zurich');
    expect(exactMatch('the seine', ['Seine', 'Seine River'])).toBe(true);
    expect(exactMatch('Loire', ['Seine'])).toBe(false);
  });

  it('reads the picked option as a letter or as the option text', () => {
    expect(extractChoice('(B)')).toBe('B');
    expect(extractChoice('The answer is C because...')).toBe('C');
    expect(extractChoice('D. 12 apples')).toBe('D');
    expect(extractChoice('7', ['4', '7', '9'])).toBe('B');
    expect(extractChoice('no idea')).toBeUndefined();
    expect(checkChoice('(B)', 'B', ['4', '7', '9'])).toBe(true);
    expect(checkChoice('(B)', '7', ['4', '7', '9'])).toBe(true);
    expect(checkChoice('A', 'B')).toBe(false);
  });
});
