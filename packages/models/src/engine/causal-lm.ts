import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import { createRuntime, type Device, type HostTensor, type TensorRuntime, type TensorSession } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { ATTENTION_MASK, INPUT_IDS, newKeyName, newValueName, POSITION_IDS } from '../graph/decoder-graph';
import { buildInferenceGraph, ENTROPY, LAST_LOGITS, LOGPROBS, SCORED_POSITIONS, TARGET_IDS } from '../graph/inference-graph';
import { type LoraLayout, loraFeeds, loraLayoutOf } from '../graph/lora-inputs';
import { createLoraAdapter, type LoraAdapter, type LoraSettings, parseLoraSettings } from '../lora/lora-adapter';
import type { DecoderModel } from '../weights/random-model';
import { completionPositions, packScoringBatch, unpackCompletionValues } from './batch-packing';
import { appendToCache, cacheFeeds, type KeyValueCache } from './key-value-cache';
import { createGraphSession } from './session-loader';

/** Settings for {@link createCausalLm}. */
export interface CausalLmSettings {
  model: DecoderModel;
  /** A runtime to share between models; default one on `device`. */
  runtime?: TensorRuntime;
  /** Used when no runtime is given; default 'auto'. */
  device?: Device;
  /** Adds LoRA inputs of this layout, so any adapter of that layout can be fed per call. */
  lora?: LoraSettings;
  /** Id written into padding positions (its value never matters); default 0. */
  padTokenId?: number;
  /**
   * Feed the weights from the model's arrays on every run, on CUDA too (SessionSettings.hostWeights),
   * so in-place updates of them (full-parameter training) reach this session; default false.
   */
  hostWeights?: boolean;
}

/** Log-probs of completion tokens, one row per completion, optionally with entropies. */
export interface CompletionScores {
  logprobs: number[][];
  entropy?: number[][];
}

/** One forward step over new tokens, given the cache of the earlier ones. */
export interface ForwardStepInput {
  inputIds: HostTensor<'int64'>; // [batch, sequence]
  attentionMask: HostTensor<'int64'>; // [batch, sequence]: the new tokens' (the cache keeps its own)
  positionIds: HostTensor<'int64'>; // [batch, sequence]
  /** The earlier tokens' keys and values (createKeyValueCache); the step writes this run's into it. */
  cache?: KeyValueCache;
  adapter?: LoraAdapter;
}

/** A decoder causal LM (any supported family) running in one ONNX Runtime session. */
export interface CausalLm {
  readonly config: DecoderConfig;
  readonly loraLayout: LoraLayout | undefined;
  readonly session: TensorSession;
  /** Log-probs (and entropies) of each completion given its prompt, batched and padding-aware. */
  logprobs(batch: PolicyBatch, settings?: { entropy?: boolean; adapter?: LoraAdapter }): Promise<CompletionScores>;
  /**
   * Logits of the last position of each row, attending to `input.cache` and the new tokens; the
   * new tokens' keys and values are written into the cache, whose `length` grows by `sequence`.
   */
  step(input: ForwardStepInput): Promise<{ lastLogits: Float32Array; vocabSize: number }>;
  release(): Promise<void>;
}

/**
 * `rows`, unless a value is NaN or infinite: then an error naming the output, the completion
 * and the token (JSON would print it as null and a caller would go on with it).
 */
function finiteRows(what: string, rows: number[][]): number[][] {
  rows.forEach((row, completion) => {
    const token = row.findIndex((value) => !Number.isFinite(value));
    if (token >= 0) {
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `The ${what} of completion ${completion}, token ${token}, is ${row[token]}: the model's outputs are not finite (check its weights and adapter for NaN or huge values).`,
        details: { output: what, completion, token },
      });
    }
  });
  return rows;
}

/** Builds the inference graph of `model` and opens its session. */
export async function createCausalLm(settings: CausalLmSettings): Promise<CausalLm> {
  const { config, weights } = settings.model;
  const runtime = settings.runtime ?? createRuntime({ device: settings.device ?? 'auto' });
  const loraConfig = settings.lora ? parseLoraSettings(settings.lora) : undefined;
  const loraLayout = loraConfig ? loraLayoutOf(config, loraConfig) : undefined;
  const session = await createGraphSession(runtime, buildInferenceGraph(config, weights, loraLayout), 'qwen3-inference', {
    hostWeights: settings.hostWeights ?? false,
  });
  const zeroAdapter = loraConfig ? createLoraAdapter(config, loraConfig) : undefined;
  if (zeroAdapter) for (const matrices of zeroAdapter.matrices.values()) matrices.a.fill(0);

  const adapterFeeds = (adapter: LoraAdapter | undefined): Record<string, HostTensor> => {
    if (!loraLayout) {
      if (adapter) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: 'This model was opened without LoRA inputs; pass `lora` settings to createCausalLm to feed an adapter.',
        });
      }
      return {};
    }
    return loraFeeds(loraLayout, adapter ?? zeroAdapter!);
  };
  const checkLength = (length: number) => {
    if (length > config.maxPositionEmbeddings) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `A sequence of ${length} tokens exceeds the model's max_position_embeddings ${config.maxPositionEmbeddings}.`,
        details: { length },
      });
    }
  };
  return {
    config,
    loraLayout,
    session,
    async logprobs(batch, options = {}) {
      if (batch.promptIds.length === 0) return { logprobs: [], ...(options.entropy ? { entropy: [] } : {}) };
      const packed = packScoringBatch(batch, config.vocabSize, settings.padTokenId ?? 0);
      checkLength(packed.length);
      const scored = completionPositions(packed);
      const noCache = cacheFeeds(config, packed.attentionMask, undefined);
      const outputs = await session.run(
        {
          [INPUT_IDS]: packed.inputIds,
          [ATTENTION_MASK]: noCache.attentionMask,
          [POSITION_IDS]: packed.positionIds,
          [TARGET_IDS]: packed.targetIds,
          [SCORED_POSITIONS]: scored.positions,
          ...noCache.feeds,
          ...adapterFeeds(options.adapter),
        },
        options.entropy ? [LOGPROBS, ENTROPY] : [LOGPROBS],
      );
      const logprobs = finiteRows('log-prob', unpackCompletionValues(packed, outputs[LOGPROBS]!.data as Float32Array, scored.width));
      if (!options.entropy) return { logprobs };
      return { logprobs, entropy: finiteRows('entropy', unpackCompletionValues(packed, outputs[ENTROPY]!.data as Float32Array, scored.width)) };
    },
    async step(input) {
      const [batch, sequence] = input.inputIds.shape as [number, number];
      const { cache } = input;
      if (input.attentionMask.shape[0] !== batch || input.attentionMask.shape[1] !== sequence) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `step: attentionMask is [${input.attentionMask.shape.join(', ')}]; it masks the new tokens only, [${batch}, ${sequence}] as inputIds (the cache keeps the earlier tokens' mask).`,
          details: { attentionMask: input.attentionMask.shape, inputIds: input.inputIds.shape },
        });
      }
      checkLength((cache?.length ?? 0) + sequence);
      const { feeds, attentionMask } = cacheFeeds(config, input.attentionMask, cache);
      const layers = Array.from({ length: config.numHiddenLayers }, (_, layer) => layer);
      const outputs = await session.run(
        {
          [INPUT_IDS]: input.inputIds,
          [ATTENTION_MASK]: attentionMask,
          [POSITION_IDS]: input.positionIds,
          [TARGET_IDS]: { dtype: 'int64', shape: [batch, sequence], data: new BigInt64Array(batch * sequence) },
          // No scored positions: the head runs at the last position only (a session runs every node,
          // so one scored position would apply the head a second time each step).
          [SCORED_POSITIONS]: { dtype: 'int64', shape: [batch, 0], data: new BigInt64Array(0) },
          ...feeds,
          ...adapterFeeds(input.adapter),
        },
        // Without a cache this run's keys and values are not wanted (the cache-free recomputation).
        cache ? [LAST_LOGITS, ...layers.flatMap((layer) => [newKeyName(layer), newValueName(layer)])] : [LAST_LOGITS],
      );
      if (cache) {
        appendToCache(
          cache,
          layers.map((layer) => outputs[newKeyName(layer)]!),
          layers.map((layer) => outputs[newValueName(layer)]!),
          input.attentionMask,
        );
      }
      return { lastLogits: outputs[LAST_LOGITS]!.data as Float32Array, vocabSize: config.vocabSize };
    },
    release: () => session.release(),
  };
}
