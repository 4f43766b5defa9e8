import { AgentFlowError, createRandom, type PolicyGenerateRequest, type PolicyGeneration, type Random } from '@agentflow/core';
import type { HostTensor } from '@agentflow/tensor';
import type { ConstraintState, TokenConstraint } from '../constrained/token-constraint';
import type { LoraAdapter } from '../lora/lora-adapter';
import { findStopString, sampleToken, validateSamplingSettings } from '../sampling/sample-token';
import { packPromptBatch } from './batch-packing';
import type { CausalLm } from './causal-lm';
import { createKeyValueCache } from './key-value-cache';

/** What generation needs from a tokenizer: text for stop strings and results. */
export interface GenerationTokenizer {
  decode(ids: readonly number[]): string;
}

/**
 * Prompt tokens per prefill run when {@link GenerateSettings.prefillChunkTokens} is not set: a
 * prompt longer than this is fed through the KV cache in chunks, so a prefill's attention scores
 * are at most [rows, heads, 512, total]. The memory plan of a generating session assumes it too.
 */
export const DEFAULT_PREFILL_CHUNK_TOKENS = 512;

/** Settings shared by every request of one {@link generate} call. */
export interface GenerateSettings {
  /** Ids that end a completion. */
  eosTokenIds: readonly number[];
  tokenizer?: GenerationTokenizer;
  /** Builds the constraint of a request's `jsonSchema` (see createJsonSchemaConstraints). */
  constraintFor?: (jsonSchema: Record<string, unknown>) => TokenConstraint;
  /** Random source for requests without a seed; default createRandom(0). */
  random?: Random;
  adapter?: LoraAdapter;
  /**
   * false recomputes the whole sequence at every step (the check that the KV cache is exact: the
   * same tokens, log-probs within float32 rounding, as the cache changes only the order of sums).
   */
  useCache?: boolean;
  padTokenId?: number;
  /**
   * Prompt tokens per prefill run at most (with the KV cache): a long prompt is fed in chunks,
   * so attention scores are [rows, heads, chunk, total] instead of [rows, heads, prompt, prompt].
   * Default {@link DEFAULT_PREFILL_CHUNK_TOKENS} (512).
   */
  prefillChunkTokens?: number;
}

interface RowState {
  request: PolicyGenerateRequest;
  random: Random;
  tokenIds: number[];
  logprobs: number[];
  finishReason: PolicyGeneration['finishReason'] | undefined;
  text: string;
  constraint?: TokenConstraint;
  constraintState?: ConstraintState;
}

/**
 * Batched sampling: one prefill of the left-padded prompts, then one decode step per token with
 * the KV cache, a buffer of prompt + maxTokens - 1 slots per row made once for the call (each
 * step writes its tokens' keys and values in; none copies the cache). Rows that finish stay in
 * the batch, fed padding, until the last one ends. Each row stops at EOS (kept in `tokenIds`, not
 * in `text`), at a stop string (text cut before it) or at `maxTokens`. `logprobs` are the model's
 * log-probs of the drawn tokens.
 */
export async function generate(
  lm: CausalLm,
  requests: readonly PolicyGenerateRequest[],
  settings: GenerateSettings,
): Promise<PolicyGeneration[]> {
  if (requests.length === 0) return [];
  const eos = new Set(settings.eosTokenIds);
  const fallbackRandom = settings.random ?? createRandom(0);
  const rows: RowState[] = requests.map((request, index) => {
    validateSamplingSettings(request);
    if (!Number.isInteger(request.maxTokens) || request.maxTokens < 0) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `maxTokens must be an integer >= 0, got ${request.maxTokens}.` });
    }
    if ((request.stop?.length || request.jsonSchema) && !settings.tokenizer) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'Stop strings and jsonSchema need a tokenizer in the generate settings.' });
    }
    const row: RowState = {
      request,
      random: request.seed === undefined ? fallbackRandom.fork(`row-${index}`) : createRandom(request.seed),
      tokenIds: [],
      logprobs: [],
      finishReason: request.maxTokens === 0 ? 'length' : undefined,
      text: '',
    };
    if (request.jsonSchema) {
      if (!settings.constraintFor) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'A request has jsonSchema but no constraintFor was given.' });
      }
      row.constraint = settings.constraintFor(request.jsonSchema);
      row.constraintState = row.constraint.initial;
    }
    return row;
  });
  const padTokenId = settings.padTokenId ?? 0;
  const prompts = packPromptBatch(
    requests.map((request) => request.promptIds),
    lm.config.vocabSize,
    padTokenId,
  );
  const batch = prompts.batch;
  const useCache = settings.useCache ?? true;
  const mask: bigint[][] = Array.from({ length: batch }, (_, row) =>
    Array.from(prompts.attentionMask.data.subarray(row * prompts.length, (row + 1) * prompts.length)),
  );
  const allIds: bigint[][] = Array.from({ length: batch }, (_, row) =>
    Array.from(prompts.inputIds.data.subarray(row * prompts.length, (row + 1) * prompts.length)),
  );
  const allPositions: bigint[][] = Array.from({ length: batch }, (_, row) =>
    Array.from(prompts.positionIds.data.subarray(row * prompts.length, (row + 1) * prompts.length)),
  );
  const matrix = (values: bigint[][], from: number, to = values[0]!.length): HostTensor<'int64'> => {
    const width = to - from;
    const data = new BigInt64Array(batch * width);
    values.forEach((row, index) => {
      data.set(row.slice(from, to), index * width);
    });
    return { dtype: 'int64', shape: [batch, width], data };
  };

  // The sampler's weights, one buffer for every draw of this call (a vocabulary of float64 each).
  const scratch = new Float64Array(lm.config.vocabSize);
  const maxSteps = Math.max(...requests.map((request) => request.maxTokens));
  // Every token fed goes into the cache once: the prompt, and each drawn token but the last.
  const cache = useCache ? createKeyValueCache(lm.config, batch, prompts.length + Math.max(maxSteps - 1, 0)) : undefined;
  // Chunked prefill: every chunk but the last goes in here; the last one samples the first token.
  const chunk = settings.prefillChunkTokens ?? DEFAULT_PREFILL_CHUNK_TOKENS;
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `prefillChunkTokens must be a positive integer, got ${chunk}.` });
  }
  while (cache && prompts.length - cache.length > chunk) {
    const [from, to] = [cache.length, cache.length + chunk];
    await lm.step({
      inputIds: matrix(allIds, from, to),
      attentionMask: matrix(mask, from, to),
      positionIds: matrix(allPositions, from, to),
      cache,
      ...(settings.adapter ? { adapter: settings.adapter } : {}),
    });
  }
  for (let stepIndex = 0; stepIndex < maxSteps && rows.some((row) => !row.finishReason); stepIndex++) {
    const from = cache?.length ?? 0; // without a cache, the whole sequence again
    const result = await lm.step({
      inputIds: matrix(allIds, from),
      attentionMask: matrix(mask, from),
      positionIds: matrix(allPositions, from),
      ...(cache ? { cache } : {}),
      ...(settings.adapter ? { adapter: settings.adapter } : {}),
    });
    const vocab = result.vocabSize;
    rows.forEach((row, index) => {
      let next = padTokenId;
      if (!row.finishReason) {
        const logits = result.lastLogits.subarray(index * vocab, (index + 1) * vocab);
        const remaining = row.request.maxTokens - row.tokenIds.length;
        const allowed = row.constraint ? row.constraint.allowedTokens(row.constraintState!, remaining) : undefined;
        const drawn = sampleToken(logits, row.request, row.random, allowed, scratch);
        next = drawn.tokenId;
        row.tokenIds.push(drawn.tokenId);
        row.logprobs.push(drawn.logprob);
        if (eos.has(drawn.tokenId)) {
          row.finishReason = 'stop';
        } else {
          if (row.constraint) row.constraintState = row.constraint.advance(row.constraintState!, drawn.tokenId);
          if (row.request.stop?.length && settings.tokenizer) {
            const text = settings.tokenizer.decode(row.tokenIds);
            if (findStopString(text, row.request.stop) >= 0) row.finishReason = 'stop';
          }
        }
        if (!row.finishReason && row.tokenIds.length >= row.request.maxTokens) row.finishReason = 'length';
      }
      allIds[index]!.push(BigInt(next));
      mask[index]!.push(1n);
      const lastPosition = allPositions[index]![allPositions[index]!.length - 1]!;
      allPositions[index]!.push(lastPosition + 1n);
    });
  }
  return rows.map((row) => {
    let text = '';
    if (settings.tokenizer) {
      text = settings.tokenizer.decode(row.tokenIds.filter((id) => !eos.has(id)));
      const cut = row.request.stop?.length ? findStopString(text, row.request.stop) : -1;
      if (cut >= 0) text = text.slice(0, cut);
    }
    return { tokenIds: row.tokenIds, text, logprobs: row.logprobs, finishReason: row.finishReason ?? 'length' };
  });
}
