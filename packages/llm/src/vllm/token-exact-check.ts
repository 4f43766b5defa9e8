import { AgentFlowError, type ChatResponse, type PolicyBatch, type TrainablePolicy } from '@agentflow/core';

/** What one step's check measured. */
export interface TokenExactFigures {
  /** Mean over tokens of |server sampling log-prob - ONNX Runtime's recomputed old log-prob|. */
  logprobGapMean: number;
  /** The largest such gap of any token. */
  logprobGapMax: number;
  /** Tokens compared (those of the completions DAPO trained on). */
  logprobGapTokens: number;
}

/** Settings for {@link createTokenExactCheck}: the limits a step's gaps must stay within. */
export interface TokenExactCheckSettings {
  /** Stop when a batch's mean gap exceeds this (null: never). */
  maxMeanGap: number | null;
  /** Stop when one token's gap exceeds this (null: never). */
  maxTokenGap: number | null;
  /** Names the sampler in messages, e.g. "the vLLM servers". */
  sampler: string;
}

/**
 * The token-exact contract, measured: every completion a back end sampled is remembered with
 * its sampling log-probs; when DAPO asks the training engine for the old log-probs of its rows,
 * each row that was sampled is compared token by token. A gap past the limits stops the step
 * before any update, naming the figures.
 */
export interface TokenExactCheck {
  /** Remembers one sampled completion (a chat reply with token ids and log-probs). */
  record(response: ChatResponse): void;
  /** `policy` with its `logprobs` compared against what was sampled. */
  wrap<Policy extends TrainablePolicy>(policy: Policy): Policy;
  /** The figures since the last call (zero tokens when nothing was compared); starts the next step afresh. */
  takeFigures(): TokenExactFigures;
}

const keyOf = (promptIds: readonly number[], completionIds: readonly number[]) => `${promptIds.join(',')}|${completionIds.join(',')}`;

/** A fresh check: nothing sampled yet, zero figures. */
export function createTokenExactCheck(settings: TokenExactCheckSettings): TokenExactCheck {
  let sampled = new Map<string, number[][]>();
  let sum = 0;
  let tokens = 0;
  let max = 0;

  function compare(batch: PolicyBatch, recomputed: number[][]): void {
    let batchSum = 0;
    let batchTokens = 0;
    let batchMax = 0;
    batch.promptIds.forEach((promptIds, row) => {
      for (const logprobs of sampled.get(keyOf(promptIds, batch.completionIds[row]!)) ?? []) {
        const old = recomputed[row]!;
        for (let token = 0; token < logprobs.length; token++) {
          const gap = Math.abs(logprobs[token]! - old[token]!);
          batchSum += gap;
          batchMax = Math.max(batchMax, gap);
        }
        batchTokens += logprobs.length;
      }
    });
    sum += batchSum;
    tokens += batchTokens;
    max = Math.max(max, batchMax);
    const mean = batchTokens === 0 ? 0 : batchSum / batchTokens;
    const overMean = settings.maxMeanGap !== null && mean > settings.maxMeanGap;
    const overMax = settings.maxTokenGap !== null && batchMax > settings.maxTokenGap;
    if (overMean || overMax) {
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message:
          `The log-probs ${settings.sampler} sampled with and ONNX Runtime's recomputed old log-probs disagree: mean gap ${mean.toExponential(3)}, max ${batchMax.toExponential(3)} over ${batchTokens} tokens ` +
          `(limits: mean ${settings.maxMeanGap ?? 'none'}, max ${settings.maxTokenGap ?? 'none'}). The servers may serve another base model, tokenizer or adapter than the trainer; training stopped before this update.`,
        details: { mean, max: batchMax, tokens: batchTokens },
      });
    }
  }

  return {
    record(response) {
      const { promptTokenIds, completionTokenIds, completionLogprobs } = response;
      if (!promptTokenIds || !completionTokenIds || !completionLogprobs) return;
      const key = keyOf(promptTokenIds, completionTokenIds);
      sampled.set(key, [...(sampled.get(key) ?? []), completionLogprobs]);
    },
    wrap(policy) {
      return {
        ...policy,
        async logprobs(batch: PolicyBatch) {
          const recomputed = await policy.logprobs(batch);
          compare(batch, recomputed);
          return recomputed;
        },
      };
    },
    takeFigures() {
      const figures = { logprobGapMean: tokens === 0 ? 0 : sum / tokens, logprobGapMax: max, logprobGapTokens: tokens };
      sampled = new Map();
      sum = 0;
      tokens = 0;
      max = 0;
      return figures;
    },
  };
}
