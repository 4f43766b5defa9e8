import { AgentFlowError } from '@agentflow/core';
import { findNearDuplicates, type LeakageCandidate, type NearDuplicateSettings, type SuspectedPair } from './find-near-duplicates';

export interface LeakageCheckSettings extends NearDuplicateSettings {
  /** Let a leaking split through (the pairs are still returned so the caller can log them). */
  allowLeakage?: boolean;
  /** Names for the message, e.g. file paths. */
  trainName?: string;
  testName?: string;
  /** What the message tells the user to do about the pairs (default: remove them, or allow leakage). */
  remedy?: string;
}

/**
 * The guard the trainer runs before it trains: finds near-duplicate (train, test) pairs and
 * throws a `DATA_LEAKAGE` AgentFlowError listing them, unless `allowLeakage` is set.
 * Returns the pairs found (empty for a clean split).
 */
export function assertNoLeakage(
  train: readonly LeakageCandidate[],
  test: readonly LeakageCandidate[],
  settings: LeakageCheckSettings = {},
): SuspectedPair[] {
  const {
    allowLeakage = false,
    trainName = 'train',
    testName = 'test',
    remedy = 'Remove them from the training data, or allow leakage explicitly.',
    ...matching
  } = settings;
  const pairs = findNearDuplicates(train, test, matching);
  if (pairs.length > 0 && !allowLeakage) throw leakageError(pairs, { trainName, testName, remedy });
  return pairs;
}

/** The DATA_LEAKAGE error for `pairs`: up to ten listed as `test ~ train (score)`, then what to do. */
export function leakageError(
  pairs: ReadonlyArray<Pick<SuspectedPair, 'train_id' | 'test_id' | 'score'>>,
  names: { trainName: string; testName: string; remedy: string },
): AgentFlowError {
  const shown = pairs
    .slice(0, 10)
    .map((pair) => `${pair.test_id} ~ ${pair.train_id} (${pair.score.toFixed(2)})`)
    .join(', ');
  const more = pairs.length > 10 ? ` and ${pairs.length - 10} more` : '';
  return new AgentFlowError({
    code: 'DATA_LEAKAGE',
    message: `${pairs.length} ${names.testName} item(s) leak into ${names.trainName}: ${shown}${more}. ${names.remedy}`,
    details: { pairs },
  });
}

/** The train items that appear in no suspected pair: a clean training set. */
export function withoutLeakedItems<Item extends LeakageCandidate>(train: readonly Item[], pairs: readonly SuspectedPair[]): Item[] {
  const leaked = new Set(pairs.map((pair) => pair.train_id));
  return train.filter((item) => !leaked.has(item.id));
}
