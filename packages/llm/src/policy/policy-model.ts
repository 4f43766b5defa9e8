import {
  AgentFlowError,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type LanguageModel,
  type PolicyGenerateRequest,
  type PolicyGeneration,
  type TrainablePolicy,
} from '@agentflow/core';
import { abortedError } from '../transport/sleep';

/** Turns chat messages into the prompt token ids of a local policy, and ids back into text. */
export interface ChatTokenizer {
  /** The prompt ids of `messages`, chat template applied, ending where the assistant starts. */
  encodeChat(messages: readonly ChatMessage[]): number[];
  decode(ids: readonly number[]): string;
}

export interface PolicyModelSettings {
  policy: TrainablePolicy;
  tokenizer: ChatTokenizer;
  /** Reported as `modelId` (default "local-policy"). */
  modelId?: string;
  /** Completion token limit when a request sets none (default 256). */
  maxTokens?: number;
  /** Temperature when a request sets none (default 1: on-policy sampling for RL). */
  temperature?: number;
  /** Requests made in the same tick are sent to `policy.generate` together, up to this many (default 8). */
  maxBatchSize?: number;
}

interface Pending {
  request: PolicyGenerateRequest;
  signal: AbortSignal | undefined;
  resolve: (generation: PolicyGeneration) => void;
  reject: (error: unknown) => void;
}

/**
 * A {@link LanguageModel} over a local {@link TrainablePolicy}: the reply carries the exact
 * prompt and completion token ids and the sampling log-probs that training needs.
 * Concurrent calls are batched into one `generate` call; one batch runs at a time.
 */
export function createPolicyModel(settings: PolicyModelSettings): LanguageModel {
  const modelId = settings.modelId ?? 'local-policy';
  const maxBatchSize = settings.maxBatchSize ?? 8;
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `maxBatchSize must be a positive integer, got ${maxBatchSize}.`,
    });
  }
  const pending: Pending[] = [];
  let draining = false;

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (pending.length > 0) {
        const batch = pending.splice(0, maxBatchSize).filter((item) => {
          if (!item.signal?.aborted) return true;
          item.reject(abortedError(item.signal, 'The policy generation'));
          return false;
        });
        if (batch.length === 0) continue;
        try {
          const generations = await settings.policy.generate(batch.map((item) => item.request));
          if (generations.length !== batch.length) {
            throw new AgentFlowError({
              code: 'SHAPE_MISMATCH',
              message: `policy.generate returned ${generations.length} generations for ${batch.length} requests.`,
            });
          }
          for (const [i, item] of batch.entries()) item.resolve(generations[i]!);
        } catch (error) {
          for (const item of batch) item.reject(error);
        }
      }
    } finally {
      draining = false;
    }
  }

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    if (request.signal?.aborted) throw abortedError(request.signal, 'The policy generation');
    const promptIds = settings.tokenizer.encodeChat(request.messages);
    const generateRequest: PolicyGenerateRequest = {
      promptIds,
      maxTokens: request.maxTokens ?? settings.maxTokens ?? 256,
      temperature: request.temperature ?? settings.temperature ?? 1,
      ...(request.topP === undefined ? {} : { topP: request.topP }),
      ...(request.seed === undefined ? {} : { seed: request.seed }),
      ...(request.stop ? { stop: request.stop } : {}),
      ...(request.jsonSchema ? { jsonSchema: request.jsonSchema } : {}),
    };
    const generation = await new Promise<PolicyGeneration>((resolve, reject) => {
      pending.push({ request: generateRequest, signal: request.signal, resolve, reject });
      // Let the other calls of this tick join the batch.
      if (!draining) setImmediate(() => void (draining ? undefined : drain()));
    });
    if (generation.logprobs.length !== generation.tokenIds.length) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `policy.generate returned ${generation.tokenIds.length} tokens but ${generation.logprobs.length} log-probs.`,
      });
    }
    const text =
      generation.text === '' && generation.tokenIds.length > 0
        ? settings.tokenizer.decode(generation.tokenIds)
        : generation.text;
    return {
      text,
      finishReason: generation.finishReason,
      model: modelId,
      usage: { promptTokens: promptIds.length, completionTokens: generation.tokenIds.length },
      promptTokenIds: promptIds,
      completionTokenIds: generation.tokenIds,
      completionLogprobs: generation.logprobs,
    };
  }

  return { specificationVersion: 'v1', provider: 'local', modelId, chat };
}
