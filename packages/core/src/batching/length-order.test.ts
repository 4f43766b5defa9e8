import { describe, expect, it } from 'vitest';
import { lengthOrder, rowLength } from './length-order';

describe('lengthOrder', () => {
  it('puts positions shortest first, ties in their given order', () => {
    expect(lengthOrder([42, 5, 32, 5, 7, 42])).toEqual([1, 3, 4, 2, 0, 5]);
    expect(lengthOrder([])).toEqual([]);
  });

  it('measures a row as its prompt and completion tokens', () => {
    expect(rowLength({ promptIds: [1, 2, 3], completionIds: [4, 5] })).toBe(5);
  });
});
