import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import { createRuntime, type Device, type HostTensor, type TensorRuntime, type TensorSession } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import {
  ATTENTION_MASK,
  INPUT_IDS,
  POSITION_IDS,
  pastKeyName,
  pastValueName,
  presentKeyName,
  presentValueName,
} from '../graph/decoder-graph';
import { buildInferenceGraph, ENTROPY, LAST_LOGITS, LOGPROBS, SCORED_POSITIONS, TARGET_IDS } from '../graph/inference-graph';
import { type LoraLayout, loraFeeds, loraLayoutOf } from '../graph/lora-inputs';
import { createLoraAdapter, type LoraAdapter, type LoraSettings, parseLoraSettings } from '../lora/lora-adapter';
import type { DecoderModel } from '../weights/random-model';
import { completionPositions, packScoringBatch, unpackCompletionValues } from './batch-packing';
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

/** The key/value cache of a running batch: per layer [batch, kvHeads, total, headDim]. */
export interface KeyValueCache {
  keys: HostTensor[];
  values: HostTensor[];
}

/** One forward step over new tokens, given the cache of the earlier ones. */
export interface ForwardStepInput {
  inputIds: HostTensor<'int64'>; // [batch, sequence]
  attentionMask: HostTensor<'int64'>; // [batch, past + sequence]
  positionIds: HostTensor<'int64'>; // [batch, sequence]
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
  /** Logits of the last position of each row, and the cache extended by the new tokens. */
  step(input: ForwardStepInput): Promise<{ lastLogits: Float32Array; vocabSize: number; cache: KeyValueCache }>;
  release(): Promise<void>;
}

/** An empty cache for `batch` rows: zero-length past. */
export function emptyCache(config: DecoderConfig, batch: number): KeyValueCache {
  const shape = [batch, config.numKeyValueHeads, 0, config.headDim];
  const empty = (): HostTensor => ({ dtype: 'float32', shape, data: new Float32Array(0) });
  return {
    keys: Array.from({ length: config.numHiddenLayers }, empty),
    values: Array.from({ length: config.numHiddenLayers }, empty),
  };
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
  const cacheFeeds = (cache: KeyValueCache): Record<string, HostTensor> => {
    const feeds: Record<string, HostTensor> = {};
    cache.keys.forEach((key, layer) => {
      feeds[pastKeyName(layer)] = key;
      feeds[pastValueName(layer)] = cache.values[layer]!;
    });
    return feeds;
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
      const outputs = await session.run(
        {
          [INPUT_IDS]: packed.inputIds,
          [ATTENTION_MASK]: packed.attentionMask,
          [POSITION_IDS]: packed.positionIds,
          [TARGET_IDS]: packed.targetIds,
          [SCORED_POSITIONS]: scored.positions,
          ...cacheFeeds(emptyCache(config, packed.batch)),
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
      const cache = input.cache ?? emptyCache(config, batch);
      checkLength(input.attentionMask.shape[1]!);
      const fetches = [LAST_LOGITS, ...cache.keys.flatMap((_, layer) => [presentKeyName(layer), presentValueName(layer)])];
      const outputs = await session.run(
        {
          [INPUT_IDS]: input.inputIds,
          [ATTENTION_MASK]: input.attentionMask,
          [POSITION_IDS]: input.positionIds,
          [TARGET_IDS]: { dtype: 'int64', shape: [batch, sequence], data: new BigInt64Array(batch * sequence) },
          // One scored position per row (its values are not read): the head runs at the last position only.
          [SCORED_POSITIONS]: { dtype: 'int64', shape: [batch, 1], data: new BigInt64Array(batch) },
          ...cacheFeeds(cache),
          ...adapterFeeds(input.adapter),
        },
        fetches,
      );
      return {
        lastLogits: outputs[LAST_LOGITS]!.data as Float32Array,
        vocabSize: config.vocabSize,
        cache: {
          keys: cache.keys.map((_, layer) => outputs[presentKeyName(layer)]!),
          values: cache.values.map((_, layer) => outputs[presentValueName(layer)]!),
        },
      };
    },
    release: () => session.release(),
  };
}
