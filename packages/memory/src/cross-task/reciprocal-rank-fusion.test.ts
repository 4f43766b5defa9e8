import { describe, expect, it } from 'vitest';
import { RECIPROCAL_RANK_FUSION_K, reciprocalRankFusion } from './reciprocal-rank-fusion';

describe('reciprocalRankFusion', () => {
  const identity = (item: string) => item;

  it('sums 1 / (60 + rank) over the lists, as in Cormack et al. 2009', () => {
    const fused = reciprocalRankFusion([['a', 'b', 'c'], ['b', 'a']], identity);
    expect(RECIPROCAL_RANK_FUSION_K).toBe(60);
    expect(fused.map((entry) => entry.item)).toEqual(['a', 'b', 'c']);
    expect(fused[0]?.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(fused[1]?.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[2]?.score).toBeCloseTo(1 / 63, 12);
  });

  it('puts an item ranked well in both lists above one ranked first in only one', () => {
    const fused = reciprocalRankFusion([['x', 'both'], ['y', 'both']], identity);
    expect(fused[0]?.item).toBe('both');
  });

  it('breaks exact ties by best rank, then by key, so the order never depends on input order', () => {
    const one = reciprocalRankFusion([['p'], ['q']], identity).map((entry) => entry.item);
    const two = reciprocalRankFusion([['q'], ['p']], identity).map((entry) => entry.item);
    expect(one).toEqual(['p', 'q']);
    expect(two).toEqual(['p', 'q']);
  });

  it('honours a custom k', () => {
    expect(reciprocalRankFusion([['a']], identity, 1)[0]?.score).toBe(0.5);
  });
});
