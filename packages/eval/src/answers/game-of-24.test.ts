import { describe, expect, it } from 'vitest';
import { checkGameOf24 } from './game-of-24';

describe('checkGameOf24', () => {
  it('accepts any correct expression, with × ÷ or * /, brackets and a trailing "= 24"', () => {
    expect(checkGameOf24('(1+1+1)×8', [1, 1, 1, 8])).toEqual({ correct: true });
    expect(checkGameOf24('8*(1+1+1) = 24', [1, 1, 1, 8])).toEqual({ correct: true });
    expect(checkGameOf24('(7-(8÷8))×4', [4, 7, 8, 8]).correct).toBe(true);
    expect(checkGameOf24('[4*(7-8/8)]', [8, 8, 7, 4]).correct).toBe(true);
    // Exact arithmetic: 8/(3-8/3) = 24 only with fractions.
    expect(checkGameOf24('8/(3-8/3)', [3, 3, 8, 8]).correct).toBe(true);
  });

  it('rejects a number used twice, a number left out, a wrong result, other numbers and other operators', () => {
    expect(checkGameOf24('(8+8+8)×1', [1, 1, 1, 8])).toMatchObject({ correct: false, reason: expect.stringMatching(/uses 8 more often than given/) });
    expect(checkGameOf24('(1+1+1)×8', [1, 1, 1, 1, 8])).toMatchObject({ correct: false, reason: 'does not use 1' });
    expect(checkGameOf24('(1+1+1)×8+1', [1, 1, 1, 8, 1])).toMatchObject({ correct: false, reason: 'evaluates to 25, not 24' });
    expect(checkGameOf24('3×8', [1, 1, 1, 8]).correct).toBe(false);
    expect(checkGameOf24('2^3×3', [2, 3, 3]).correct).toBe(false);
    expect(checkGameOf24('-1+25', [1, 25]).correct).toBe(false);
    expect(checkGameOf24('', [1, 2, 3, 4]).correct).toBe(false);
    expect(checkGameOf24('os.system("x")', [1, 2, 3, 4]).correct).toBe(false);
  });
});
