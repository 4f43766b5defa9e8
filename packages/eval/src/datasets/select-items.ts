import { AgentFlowError } from '@agentflow/core';
import type { BenchmarkItem } from './benchmark-item';

/** Which items to keep. Every given condition must hold. */
export interface ItemFilter {
  /** Inclusive year range; items without a year are dropped when this is set. */
  years?: { from?: number; to?: number };
  /** Keep items whose id matches. */
  idPattern?: RegExp;
  /** Keep only these ids. */
  ids?: readonly string[];
  /** Any other condition. */
  where?: (item: BenchmarkItem) => boolean;
}

/**
 * Selects a split by filter, e.g. AIME 1983-2023 as `{ years: { from: 1983, to: 2023 } }`.
 * A split by year alone can still leak (2024 problems reappear under other ids): run the
 * leakage check on the result.
 */
export function selectItems(items: readonly BenchmarkItem[], filter: ItemFilter): BenchmarkItem[] {
  const { years } = filter;
  if (years?.from !== undefined && years.to !== undefined && years.from > years.to) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Year range ${years.from}-${years.to} is empty: "from" must not exceed "to".`,
      details: { years },
    });
  }
  const ids = filter.ids ? new Set(filter.ids) : undefined;
  return items.filter((item) => {
    if (years) {
      if (item.year === undefined) return false;
      if (years.from !== undefined && item.year < years.from) return false;
      if (years.to !== undefined && item.year > years.to) return false;
    }
    if (filter.idPattern && !filter.idPattern.test(item.id)) return false;
    if (ids && !ids.has(item.id)) return false;
    if (filter.where && !filter.where(item)) return false;
    return true;
  });
}
