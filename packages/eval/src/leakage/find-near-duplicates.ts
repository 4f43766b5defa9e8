import { AgentFlowError } from '@agentflow/core';
import { z } from 'zod';
import { leakageTokens } from './normalize-text';
import { shingleSet } from './shingles';

/** Something with an id and a text: a benchmark item, a task, a document. */
export interface LeakageCandidate {
  id: string;
  question: string;
}

/** A train item and a test item that look like the same problem. */
export interface SuspectedPair {
  train_id: string;
  test_id: string;
  /** Similarity in [0, 1] (see `score` in the settings). */
  score: number;
}

export const nearDuplicateSettingsSchema = z
  .object({
    threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe(
        'Report pairs scoring at least this. 0.5 sits far from both sides measured on AIME: the 14 AIME 2024 copies in the AIME CSV score 0.71-1.0 against aime24.json, the closest unrelated pair 0.29 (docs/perf/eval.md).',
      ),
    shingleSize: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(3)
      .describe('Words per shingle. 3-word shingles survive small rewordings (MinHash dedup practice, Broder 1997).'),
    commonShingleFraction: z
      .number()
      .min(0)
      .max(1)
      .default(0.01)
      .describe(
        'Shingles found in more than this fraction of all items (and in at least 5) are boilerplate ("relatively prime positive integers find m n") and are ignored, as IDF would weigh them down.',
      ),
    minShingles: z
      .number()
      .int()
      .min(1)
      .default(4)
      .describe(
        'Fewest distinctive shingles for the overlap score; shorter or templated texts ("How many cats does Goro have?") are compared by Jaccard on all their shingles instead, and identical normalised texts always score 1.',
      ),
    score: z
      .enum(['overlap', 'jaccard'])
      .default('overlap')
      .describe(
        '"overlap": shared shingles over the smaller set (catches a test problem embedded in a longer text); "jaccard": shared over the union.',
      ),
  })
  .strict();

export type NearDuplicateSettings = z.input<typeof nearDuplicateSettingsSchema>;

export function parseNearDuplicateSettings(settings: NearDuplicateSettings = {}): z.output<typeof nearDuplicateSettingsSchema> {
  const parsed = nearDuplicateSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid near-duplicate settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/**
 * Finds every (train, test) pair whose normalised texts share enough word shingles.
 * Exact, not sampled: an inverted index from shingle to train items means each test item
 * only meets the train items it shares a shingle with, so no pair above the threshold is
 * missed (MinHash would trade that guarantee for memory on corpora far larger than these).
 * Pairs come sorted by score, highest first, then by ids.
 */
export function findNearDuplicates(
  train: readonly LeakageCandidate[],
  test: readonly LeakageCandidate[],
  settings: NearDuplicateSettings = {},
): SuspectedPair[] {
  const { threshold, shingleSize, score, commonShingleFraction, minShingles } = parseNearDuplicateSettings(settings);
  const prepare = (item: LeakageCandidate) => {
    const tokens = leakageTokens(item.question);
    return { text: tokens.join(' '), raw: shingleSet(tokens, shingleSize), kept: new Set<string>() };
  };
  const trainSide = train.map(prepare);
  const testSide = test.map(prepare);
  const frequency = new Map<string, number>();
  for (const entry of [...trainSide, ...testSide]) {
    for (const shingle of entry.raw) frequency.set(shingle, (frequency.get(shingle) ?? 0) + 1);
  }
  const limit = Math.max(5, commonShingleFraction * (train.length + test.length));
  for (const entry of [...trainSide, ...testSide]) {
    for (const shingle of entry.raw) if ((frequency.get(shingle) ?? 0) <= limit) entry.kept.add(shingle);
  }
  // Inverted index over every shingle, so short texts (compared on all their shingles) are met too.
  const index = new Map<string, number[]>();
  trainSide.forEach((entry, trainIndex) => {
    for (const shingle of entry.raw) {
      const list = index.get(shingle);
      if (list) list.push(trainIndex);
      else index.set(shingle, [trainIndex]);
    }
  });
  const pairs: SuspectedPair[] = [];
  const shared = new Map<number, { raw: number; kept: number }>();
  testSide.forEach((entry, testIndex) => {
    if (entry.raw.size === 0) return;
    shared.clear();
    for (const shingle of entry.raw) {
      const isKept = entry.kept.has(shingle);
      for (const trainIndex of index.get(shingle) ?? []) {
        const counts = shared.get(trainIndex) ?? { raw: 0, kept: 0 };
        counts.raw++;
        if (isKept) counts.kept++;
        shared.set(trainIndex, counts);
      }
    }
    for (const [trainIndex, counts] of shared) {
      const other = trainSide[trainIndex] as typeof entry;
      let value: number;
      if (other.text === entry.text) {
        value = 1;
      } else if (Math.min(other.kept.size, entry.kept.size) >= minShingles) {
        const smaller = Math.min(other.kept.size, entry.kept.size);
        value = score === 'overlap' ? counts.kept / smaller : counts.kept / (other.kept.size + entry.kept.size - counts.kept);
      } else {
        // Too little distinctive text for the overlap to mean anything: Jaccard on every shingle.
        value = counts.raw / (other.raw.size + entry.raw.size - counts.raw);
      }
      if (value >= threshold) {
        pairs.push({ train_id: (train[trainIndex] as LeakageCandidate).id, test_id: (test[testIndex] as LeakageCandidate).id, score: Math.round(value * 1e4) / 1e4 });
      }
    }
  });
  return pairs.sort(
    (a, b) => b.score - a.score || a.test_id.localeCompare(b.test_id) || a.train_id.localeCompare(b.train_id),
  );
}
