import { AgentFlowError, describeValue, type LanguageModel } from '@agentflow/core';
import { generateObject } from '@agentflow/llm';
import PQueue from 'p-queue';
import type { PrmExample, PrmStep } from '../example/prm-example';
import { renderStepInput } from '../example/render-input';
import { createJudgeCache, type JudgeCacheRecord, judgeCacheKey } from './judge-cache';
import { judgeOutputSchema } from './judge-output';
import { JUDGE_PROMPT_VERSION, judgeMessages } from './judge-prompt';
import type { LabelFailure, LabelResult } from './label-result';
import { costOfUsage, type TokenPrices, tokenPricesSchema } from './token-prices';

export interface JudgeLabellerSettings {
  /** The judge: any core LanguageModel (an OpenAI-compatible endpoint such as DeepSeek). */
  model: LanguageModel;
  /** Token prices for the running cost; DeepSeek's by default (see `tokenPricesSchema`). */
  prices?: Partial<TokenPrices>;
  /** Judge calls in flight at once. Default 8. */
  concurrency?: number;
  /** JSONL file that keeps every judged step, so a rerun never pays for one twice. */
  cachePath?: string;
  /** Extra calls that feed a malformed reply's error back before the step is recorded as failed. Default 2. */
  maxRepairs?: number;
  /** Sampling temperature of the judge. Default 0, for repeatable labels. */
  temperature?: number;
  /** Largest reply in tokens. Default 256: a score and a sentence or two. */
  maxTokens?: number;
  /**
   * The reference answer of a step's task, shown to the judge after the step (the agent never
   * saw it); undefined for a step leaves it out. Part of the cache key, like the rest of what
   * the judge reads.
   */
  referenceAnswer?: (step: PrmStep) => string | undefined;
}

/** What the judge reads for one step: the step as the PRM sees it, then the reference answer when there is one. */
export function judgeInput(step: PrmStep, referenceAnswer: string | undefined): string {
  const rendered = renderStepInput(step);
  return referenceAnswer === undefined ? rendered : `${rendered}\n\nReference answer of the task (the agent does not see it): ${referenceAnswer}`;
}

export interface JudgeLabellerStats {
  /** Judge calls made (every attempt, including retries). */
  calls: number;
  /** Steps answered from the cache or shared with an identical step in flight. */
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  /** Running cost of every call made by this labeller, in US dollars. */
  costUsd: number;
  /**
   * Keys the schema does not name (an `analysis`, a `confidence`) dropped from the replies
   * that labelled a step (core `parseModelReply`), one per key, summed over those replies.
   */
  droppedKeys: number;
}

/** Labels steps with an LLM judge. */
export interface JudgeLabeller {
  label(steps: readonly PrmStep[], settings?: { signal?: AbortSignal; onLabelled?: (done: number) => void }): Promise<LabelResult>;
  stats(): JudgeLabellerStats;
}

/**
 * Creates an LLM-judge labeller. Each step is rendered exactly as the PRM will see it (no
 * tool output) and sent to the judge, which answers `{score, rationale}`. A reply with more
 * keys is used with those dropped (counted in `stats().droppedKeys`); a missing or
 * out-of-range score is repaired like any malformed reply. A step whose action did not
 * parse gets 0 without a call. Identical rendered steps share one call, and the cache
 * (keyed by a hash of the rendered step, judge model and prompt version) carries answers
 * across runs. A step whose judge keeps failing is returned in `failures`; it never throws
 * for one step.
 */
export function createJudgeLabeller(settings: JudgeLabellerSettings): JudgeLabeller {
  const prices = tokenPricesSchema.parse(settings.prices ?? {});
  const concurrency = settings.concurrency ?? 8;
  const maxRepairs = settings.maxRepairs ?? 2;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `concurrency must be a positive integer, got ${concurrency}.` });
  }
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `maxRepairs must be a non-negative integer, got ${maxRepairs}.` });
  }
  const model = settings.model;
  const cache = createJudgeCache(settings.cachePath);
  const inFlight = new Map<string, Promise<JudgeCacheRecord>>();
  const queue = new PQueue({ concurrency });
  const stats: JudgeLabellerStats = { calls: 0, cacheHits: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, droppedKeys: 0 };

  async function judge(key: string, rendered: string, signal: AbortSignal | undefined): Promise<JudgeCacheRecord> {
    const result = await generateObject(model, judgeOutputSchema, judgeMessages(rendered), {
      maxRepairs,
      temperature: settings.temperature ?? 0,
      maxTokens: settings.maxTokens ?? 256,
      ...(signal ? { signal } : {}),
    });
    let costUsd = 0;
    for (const attempt of result.attempts) {
      stats.calls++;
      const usage = attempt.response.usage;
      if (!usage) continue;
      const cost = costOfUsage(usage, prices);
      stats.promptTokens += usage.promptTokens;
      stats.completionTokens += usage.completionTokens;
      stats.costUsd += cost;
      costUsd += cost;
    }
    if (!result.ok) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `The judge ${model.modelId} gave no usable {score, rationale} in ${result.attempts.length} calls: ${result.error}; last reply ${describeValue(result.rawText)}`,
      });
    }
    stats.droppedKeys += result.droppedKeys.length;
    const record = { key, judgeModel: model.modelId, score: result.value.score, rationale: result.value.rationale, costUsd };
    cache.set(record);
    return record;
  }

  /** Joins the call already in flight for an identical step, or starts one; `shared` says which. */
  async function judgeShared(
    key: string,
    rendered: string,
    signal: AbortSignal | undefined,
  ): Promise<{ record: JudgeCacheRecord; shared: boolean }> {
    const running = inFlight.get(key);
    if (running) {
      stats.cacheHits++;
      return { record: await running, shared: true };
    }
    const promise = queue.add(() => judge(key, rendered, signal)).finally(() => inFlight.delete(key));
    inFlight.set(key, promise);
    return { record: await promise, shared: false };
  }

  return {
    async label(steps, options = {}) {
      const examples: (PrmExample | undefined)[] = new Array(steps.length);
      const failures: LabelFailure[] = [];
      let done = 0;
      const finish = () => options.onLabelled?.(++done);
      await Promise.all(
        steps.map(async (step, index) => {
          if (step.action === null) {
            examples[index] = { ...step, label: 0, provenance: { labeller: 'judge', costUsd: 0, rationale: 'format error' } };
            finish();
            return;
          }
          const rendered = judgeInput(step, settings.referenceAnswer?.(step));
          const key = judgeCacheKey(rendered, model.modelId, JUDGE_PROMPT_VERSION);
          const cached = cache.get(key);
          let record: JudgeCacheRecord;
          let paid = true;
          if (cached) {
            stats.cacheHits++;
            record = cached;
            paid = false;
          } else {
            try {
              const outcome = await judgeShared(key, rendered, options.signal);
              record = outcome.record;
              paid = !outcome.shared;
            } catch (error) {
              if (options.signal?.aborted) throw error;
              failures.push({ stepId: step.id, error: (error as Error).message });
              finish();
              return;
            }
          }
          examples[index] = {
            ...step,
            label: record.score,
            provenance: {
              labeller: 'judge',
              judgeModel: record.judgeModel,
              costUsd: paid ? record.costUsd : 0,
              rationale: record.rationale,
            },
          };
          finish();
        }),
      );
      return { examples: examples.filter((example) => example !== undefined), failures };
    },
    stats: () => ({ ...stats }),
  };
}
