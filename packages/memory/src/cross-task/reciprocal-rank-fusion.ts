/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms
 * Condorcet and individual Rank Learning Methods", SIGIR 2009): each list contributes
 * 1 / (k + rank) for every item it ranks (rank starts at 1), and items are ordered by the sum.
 */
export const RECIPROCAL_RANK_FUSION_K = 60; // Cormack et al. 2009, section 2: k = 60

export interface FusedItem<T> {
  item: T;
  score: number;
}

/**
 * Fuses ranked lists of items that share a key. Ties are broken by the best single rank,
 * then by key, so the order is deterministic.
 */
export function reciprocalRankFusion<T>(
  rankedLists: readonly (readonly T[])[],
  keyOf: (item: T) => string,
  k: number = RECIPROCAL_RANK_FUSION_K,
): FusedItem<T>[] {
  const fused = new Map<string, { item: T; score: number; bestRank: number }>();
  for (const list of rankedLists) {
    list.forEach((item, index) => {
      const rank = index + 1;
      const key = keyOf(item);
      const entry = fused.get(key);
      if (entry) {
        entry.score += 1 / (k + rank);
        entry.bestRank = Math.min(entry.bestRank, rank);
      } else {
        fused.set(key, { item, score: 1 / (k + rank), bestRank: rank });
      }
    });
  }
  return [...fused.entries()]
    .sort(
      ([keyA, a], [keyB, b]) =>
        b.score - a.score || a.bestRank - b.bestRank || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0),
    )
    .map(([, { item, score }]) => ({ item, score }));
}
