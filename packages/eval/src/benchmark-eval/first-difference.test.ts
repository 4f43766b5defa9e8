import { describe, expect, it } from 'vitest';
import { firstDifference } from './first-difference';

describe('firstDifference', () => {
  it('names the first differing key path, comparing lists whole', () => {
    const recorded = { planner: 'ollama:m', data: { path: '/a.json', years: [1983, 2023], limit: null }, samples: 1 };
    expect(firstDifference(recorded, structuredClone(recorded))).toBeUndefined();
    expect(firstDifference(recorded, { ...recorded, data: { ...recorded.data, years: [1983, 2024] }, samples: 4 })).toEqual({
      key: 'data.years',
      recorded: [1983, 2023],
      given: [1983, 2024],
    });
    expect(firstDifference(recorded, { ...recorded, seed: 3 })).toEqual({ key: 'seed', recorded: undefined, given: 3 });
  });
});
