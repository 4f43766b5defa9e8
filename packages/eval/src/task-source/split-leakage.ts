import { AgentFlowError, describeValue } from '@agentflow/core';
import { z } from 'zod';
import { assertNoLeakage, leakageError, withoutLeakedItems } from '../leakage/assert-no-leakage';
import { nearDuplicateSettingsSchema } from '../leakage/find-near-duplicates';
import type { TaskItem, TaskSource } from './task-source';

export const splitLeakageSettingsSchema = z
  .object({
    threshold: nearDuplicateSettingsSchema.shape.threshold.describe(
      'Near-duplicate score that counts as a leak (findNearDuplicates\' threshold). 0.5 by default: the AIME 2024 copies in the AIME CSV score 0.71-1.0 against aime24.json, the closest unrelated pair 0.29 (docs/perf/eval.md).',
    ),
    onLeak: z
      .enum(['refuse', 'drop'])
      .describe('"refuse": throw DATA_LEAKAGE listing the pairs; "drop": train without the leaked training items (the test split stays whole).'),
  })
  .strict();

/** Settings of `checkSplitLeakage`: `{ threshold?: number (default 0.5), onLeak: 'refuse' | 'drop' }`. */
export type SplitLeakageSettings = z.input<typeof splitLeakageSettingsSchema>;

/** What the leakage check found and did; plain JSON, written into a run's summary.json. */
export interface SplitLeakageRecord {
  /** Items compared in each split. */
  checked: { train: number; test: number };
  threshold: number;
  /** How pairs were found: near-duplicate question text, or the source's own `leakageKey` compared exactly. */
  method: 'near-duplicate' | 'identity';
  /** Suspected (train, test) copies, highest score first. */
  pairs: Array<{ trainId: string; testId: string; score: number }>;
  /** Train ids left out of the returned source (empty unless `onLeak` is `drop`). */
  dropped: string[];
  onLeak: 'refuse' | 'drop';
}

/** The source to train on, and the record of the check. */
export interface SplitLeakageResult {
  source: TaskSource;
  record: SplitLeakageRecord;
}

function parseSettings(settings: SplitLeakageSettings): z.output<typeof splitLeakageSettingsSchema> {
  const parsed = splitLeakageSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid split leakage settings ${describeValue(settings)}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/** `source` with the `dropped` train items gone; everything else is the source's own. */
function withoutTrainItems(source: TaskSource, dropped: ReadonlySet<string>, train: readonly TaskItem[]): TaskSource {
  const demonstration = source.demonstration;
  const dispose = source.dispose;
  return {
    kind: source.kind,
    description: `${source.description}, ${dropped.size} leaked train item(s) dropped`,
    split: (name) => (name === 'train' ? train : source.split(name)),
    item(id) {
      if (dropped.has(id)) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `Item ${describeValue(id)} was dropped from the train split as a near-duplicate of a test item.`,
          details: { id },
        });
      }
      return source.item(id);
    },
    reward: (item, answer) => source.reward(item, answer),
    createTools: (settings) => source.createTools(settings),
    ...(demonstration ? { demonstration: (item: TaskItem) => demonstration.call(source, item) } : {}),
    ...(dispose ? { dispose: () => dispose.call(source) } : {}),
    ...(source.leakageKey ? { leakageKey: (item: TaskItem) => source.leakageKey!(item) } : {}),
  };
}

/** `pairs` unless a leak is refused: then the DATA_LEAKAGE error. */
function refuseUnlessDropping<Pair extends { train_id: string; test_id: string; score: number }>(
  pairs: Pair[],
  onLeak: 'refuse' | 'drop',
  names: Parameters<typeof leakageError>[1],
): Pair[] {
  if (pairs.length > 0 && onLeak === 'refuse') throw leakageError(pairs, names);
  return pairs;
}

/** (train, test) pairs of equal `leakageKey`, as findNearDuplicates reports pairs (score 1). */
function identicalPairs(source: TaskSource, train: readonly TaskItem[], test: readonly TaskItem[]) {
  const key = (item: TaskItem) => source.leakageKey!(item);
  const byKey = new Map<string, string[]>();
  for (const item of train) byKey.set(key(item), [...(byKey.get(key(item)) ?? []), item.id]);
  return test.flatMap((item) => (byKey.get(key(item)) ?? []).map((trainId) => ({ train_id: trainId, test_id: item.id, score: 1 })));
}

/**
 * The guard a run passes before it trains: finds near-duplicate (train, test) pairs in a
 * source's splits (`findNearDuplicates`, exact) and either refuses them with a DATA_LEAKAGE
 * AgentFlowError listing them (`details.pairs` as `assertNoLeakage` gives them), or returns
 * a source without the leaked training items. A clean split returns the source itself.
 * A source with a `leakageKey` (the task world, whose templated questions read alike) is
 * compared by that key instead, exactly.
 */
export function checkSplitLeakage(source: TaskSource, settings: SplitLeakageSettings): SplitLeakageResult {
  const { threshold, onLeak } = parseSettings(settings);
  const train = source.split('train');
  const test = source.split('test');
  const remedy = 'Remove them from the training data, or drop the leaked training items (onLeak "drop"; in a run config `task.onLeakage: drop`).';
  const trainName = `the train split of ${source.description}`;
  const method = source.leakageKey ? 'identity' : 'near-duplicate';
  const pairs =
    method === 'identity'
      ? refuseUnlessDropping(identicalPairs(source, train, test), onLeak, { trainName, testName: 'test', remedy })
      : assertNoLeakage(train, test, { threshold, allowLeakage: onLeak === 'drop', trainName, testName: 'test', remedy });
  const record: SplitLeakageRecord = {
    checked: { train: train.length, test: test.length },
    threshold,
    method,
    pairs: pairs.map((pair) => ({ trainId: pair.train_id, testId: pair.test_id, score: pair.score })),
    dropped: [],
    onLeak,
  };
  if (pairs.length === 0) return { source, record };
  const kept = Object.freeze(withoutLeakedItems(train, pairs));
  const keptIds = new Set(kept.map((item) => item.id));
  record.dropped = train.filter((item) => !keptIds.has(item.id)).map((item) => item.id);
  return { source: withoutTrainItems(source, new Set(record.dropped), kept), record };
}
