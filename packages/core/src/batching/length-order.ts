/** The tokens a batch pads a row to at least: its prompt and its completion. */
export function rowLength(row: { readonly promptIds: readonly number[]; readonly completionIds: readonly number[] }): number {
  return row.promptIds.length + row.completionIds.length;
}

/**
 * Positions 0..n-1 of `lengths`, shortest first (ties in their given order). Runs of rows cut
 * from this order pad each row to rows of about its own length instead of to the longest row
 * nearby (a planner's steps grow along a trajectory, so in trajectory order a first step sits
 * beside a last one). A training update's gradient is a sum over its rows and log-probs are per
 * row, so only the padding changes, and the order of float32 sums.
 */
export function lengthOrder(lengths: readonly number[]): number[] {
  return lengths.map((_, index) => index).sort((a, b) => (lengths[a] as number) - (lengths[b] as number) || a - b);
}
