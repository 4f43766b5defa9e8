import { createHash } from 'node:crypto';
import { appendJsonl, readJsonl } from '@agentflow/core';
import { z } from 'zod';

/** One judged step as the cache keeps it (one JSONL line). */
export const judgeCacheRecordSchema = z.object({
  key: z.string().describe('sha256 of the prompt version, judge model and rendered step.'),
  judgeModel: z.string(),
  score: z.number().min(0).max(1),
  rationale: z.string(),
  costUsd: z.number().nonnegative(),
});
export type JudgeCacheRecord = z.infer<typeof judgeCacheRecordSchema>;

/**
 * The key of a judged step. The rendered input is what the judge sees; the model and
 * prompt version are in the key too so that a different judge is asked again.
 */
export function judgeCacheKey(renderedStep: string, judgeModel: string, promptVersion: number): string {
  return createHash('sha256').update(JSON.stringify([promptVersion, judgeModel, renderedStep])).digest('hex');
}

export interface JudgeCache {
  get(key: string): JudgeCacheRecord | undefined;
  set(record: JudgeCacheRecord): void;
  readonly size: number;
}

/** A cache in memory, persisted to `path` as JSONL when given (loaded on creation, appended on each set). */
export function createJudgeCache(path?: string): JudgeCache {
  const records = new Map<string, JudgeCacheRecord>();
  if (path) {
    for (const record of readJsonl(path, { schema: judgeCacheRecordSchema, allowMissing: true })) {
      records.set(record.key, record);
    }
  }
  return {
    get: (key) => records.get(key),
    set(record) {
      records.set(record.key, record);
      if (path) appendJsonl(path, [record]);
    },
    get size() {
      return records.size;
    },
  };
}
