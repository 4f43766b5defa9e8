import { AgentFlowError, type TrainablePolicy } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createTokenExactCheck } from './token-exact-check';

/** A policy whose recomputed log-probs are the sampled ones shifted by `shift` on the last token. */
function policyOff(shift: number): TrainablePolicy {
  const fail = async () => {
    throw new Error('not used');
  };
  return {
    generate: fail,
    logprobs: async (batch) => batch.completionIds.map((ids) => ids.map((_, index) => -1 + (index === ids.length - 1 ? shift : 0))),
    accumulateGradients: fail,
    applyGradients: fail,
    save: fail,
    load: fail,
  };
}

const sampled = { text: '', finishReason: 'stop' as const, model: 'm', promptTokenIds: [1, 2], completionTokenIds: [3, 4, 5, 6], completionLogprobs: [-1, -1, -1, -1] };
const batch = { promptIds: [[1, 2], [7]], completionIds: [[3, 4, 5, 6], [8]] };

describe('createTokenExactCheck', () => {
  it('reports the mean and max gap over the rows that were sampled', async () => {
    const check = createTokenExactCheck({ maxMeanGap: 0.05, maxTokenGap: null, sampler: 'the servers' });
    check.record(sampled);
    await check.wrap(policyOff(0.1)).logprobs(batch);
    const figures = check.takeFigures();
    expect(figures.logprobGapTokens).toBe(4);
    expect(figures.logprobGapMean).toBeCloseTo(0.025, 12);
    expect(figures.logprobGapMax).toBeCloseTo(0.1, 12);
    expect(check.takeFigures()).toEqual({ logprobGapMean: 0, logprobGapMax: 0, logprobGapTokens: 0 });
  });

  it('stops before the update when the back ends disagree past a limit', async () => {
    const check = createTokenExactCheck({ maxMeanGap: null, maxTokenGap: 1e-4, sampler: 'the vLLM servers (http://gpu1:8000)' });
    check.record(sampled);
    const error = await check.wrap(policyOff(0.5)).logprobs(batch).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'RUNTIME_ERROR')).toBe(true);
    expect((error as Error).message).toBe(
      "The log-probs the vLLM servers (http://gpu1:8000) sampled with and ONNX Runtime's recomputed old log-probs disagree: mean gap 1.250e-1, max 5.000e-1 over 4 tokens (limits: mean none, max 0.0001). The servers may serve another base model, tokenizer or adapter than the trainer; training stopped before this update.",
    );
  });
});
