import { AgentFlowError, assertNever } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import { biasedModules, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import { ropeInverseFrequencies } from '../config/rope-scaling';
import { type LinearModule, linearPath, lmHeadName, type ModelWeights } from '../weights/weight-names';
import { fullAttention, type LayerCache } from './full-attention';
import { createWeightInitializers, type WeightInitializers } from './graph-weights';
import { rmsNorm, rotateHalf } from './layer-math';
import { type BlockedLayerContext, blockedOutput, blockedProjections, type RowBlockSettings } from './row-blocked-layer';

/** The low-rank update of one linear layer: y += scale * (x A^T) B^T. */
export interface LoraTensors {
  a: SymbolicTensor; // [rank, in]
  b: SymbolicTensor; // [out, rank]
  scale: number;
}

/** What {@link buildDecoder} adds to a graph. */
export interface DecoderSettings {
  /**
   * Adds a fixed-capacity KV cache read in place: `cache_key.{layer}` / `cache_value.{layer}`
   * inputs [batch, kvHeads, capacity, headDim] (capacity 0 without one), whose slots the first
   * `capacity` columns of the attention mask mark, and {@link DecoderTensors.newKeyValues}: the
   * keys and values of this run's tokens, which the caller writes into its cache. Full attention only.
   */
  kvCache: boolean;
  /** LoRA tensors by `linearPath(layer, module)`. */
  lora?: ReadonlyMap<string, LoraTensors>;
  /**
   * How each layer computes attention. Default: {@link defaultAttention} of `kvCache` (blocked
   * for graphs without a cache, which training uses; full for the cached inference graph, the
   * only kind it takes).
   */
  attention?: AttentionSettings;
  /**
   * Computes each layer's row-wise parts (norms, projections, RoPE, the MLP, with LoRA) over
   * blocks of `blockSize` rows in ONNX Loops (row-blocked-layer.ts), so that a recomputed
   * layer's backward holds one block's intermediate tensors instead of the whole row's. For long
   * rows; graphs without a KV cache only. Default off: the graph computes every row at once.
   */
  rowBlocks?: RowBlockSettings;
}

/** How a decoder layer computes attention; both give the same values within float32 rounding. */
export type AttentionSettings =
  /**
   * Every query row against every key at once: per layer a [batch, heads, sequence, total] score
   * tensor (and its softmax, and in training their gradients), which grows with the square of
   * the row length.
   */
  | { kind: 'full' }
  /**
   * Blocks of `blockSize` query rows, each against every key, in an ONNX Loop whose backward
   * recomputes each block's probabilities (GraphBuilder.blockedAttention): per layer one
   * [batch, heads, blockSize, total] block at a time, so memory grows linearly with the row
   * length. A row no longer than `blockSize` runs as one block.
   */
  | { kind: 'blocked'; blockSize: number };

/**
 * Query rows per block of blocked attention by default. At the Qwen3-0.6B shape on the CPU, a
 * LoRA step at 1,024 tokens took 1.04x the unblocked step's time, and one attention layer's
 * forward and backward at 4,096 tokens added 343 MiB against 4,006 MiB unblocked (docs/perf.md,
 * issue #32).
 */
export const DEFAULT_ATTENTION_BLOCK_SIZE = 256;

/**
 * The attention a decoder graph uses unless told: blocked ({@link DEFAULT_ATTENTION_BLOCK_SIZE})
 * without a KV cache (training, scalar heads), where [rows, rows] scores and their gradients
 * are what grows with the square of the row; full with one (the inference graph, whose decode
 * steps run one row and would pay a Loop per layer for nothing).
 */
export function defaultAttention(kvCache: boolean): AttentionSettings {
  return kvCache ? { kind: 'full' } : { kind: 'blocked', blockSize: DEFAULT_ATTENTION_BLOCK_SIZE };
}

/** The graph inputs and tensors {@link buildDecoder} produced. */
export interface DecoderTensors {
  inputIds: SymbolicTensor; // [batch, sequence] int64
  attentionMask: SymbolicTensor; // [batch, capacity + sequence] int64 (capacity 0 without a KV cache)
  positionIds: SymbolicTensor; // [batch, sequence] int64
  hidden: SymbolicTensor; // [batch, sequence, hidden] after model.norm
  /** With `kvCache`, per layer the keys (after RoPE) and values of this run's tokens: [batch, kvHeads, sequence, headDim]. */
  newKeyValues: { key: SymbolicTensor; value: SymbolicTensor }[];
  /** The residual stream entering each layer and leaving the last (recompute boundaries for the backward). */
  boundaries: SymbolicTensor[];
  weights: WeightInitializers;
}

/** Graph input names, shared by every graph this package builds. */
export const INPUT_IDS = 'input_ids';
export const ATTENTION_MASK = 'attention_mask';
export const POSITION_IDS = 'position_ids';
export const cacheKeyName = (layer: number) => `cache_key.${layer}`;
export const cacheValueName = (layer: number) => `cache_value.${layer}`;
export const newKeyName = (layer: number) => `new_key.${layer}`;
export const newValueName = (layer: number) => `new_value.${layer}`;

// A large finite negative instead of -inf, so fully masked rows (left padding) give a uniform
// softmax instead of NaN, and no NaN reaches the gradients.
const MASKED_SCORE = -1e9;

/**
 * The decoder of the config's family (embedding, layers, final norm) with Hugging Face's semantics,
 * as ONNX nodes: Qwen3's q/k norm, Qwen2's q/k/v biases, Llama's scaled RoPE, as the config says.
 * Masking is general: key j (a cache slot for j < capacity, else a token of this run) is visible
 * to query i when attention_mask[b, j] = 1 and j <= capacity + i, so left padding (generation),
 * right padding (scoring) and unwritten cache slots all work.
 */
export function buildDecoder(
  graph: GraphBuilder,
  config: DecoderConfig,
  modelWeights: ModelWeights,
  settings: DecoderSettings,
): DecoderTensors {
  const { headDim, numAttentionHeads, numKeyValueHeads, rmsNormEps } = config;
  const groups = numAttentionHeads / numKeyValueHeads;
  const queryKeyNorm = hasQueryKeyNorm(config);
  const weights = createWeightInitializers(graph, modelWeights);
  const inputIds = graph.input(INPUT_IDS, 'int64', ['batch', 'sequence']);
  const attentionMask = graph.input(ATTENTION_MASK, 'int64', ['batch', 'total']);
  const positionIds = graph.input(POSITION_IDS, 'int64', ['batch', 'sequence']);

  // RoPE tables: angle[b, s, i] = position * inv_freq_i (theta^(-2i/d), scaled), repeated over both halves.
  const inverseFrequency = Float32Array.from(ropeInverseFrequencies(config.ropeTheta, headDim, config.ropeScaling));
  const frequencies = graph.constant({ dtype: 'float32', shape: [headDim / 2], data: inverseFrequency });
  const positions = graph.unsqueeze(graph.cast(positionIds, 'float32'), [2]); // [batch, sequence, 1]
  const angles = graph.mul(positions, frequencies); // [batch, sequence, headDim/2]
  const doubled = graph.concat([angles, angles], -1); // [batch, sequence, headDim]
  const cos = graph.unsqueeze(graph.cos(doubled), [1]); // [batch, 1, sequence, headDim]
  const sin = graph.unsqueeze(graph.sin(doubled), [1]);
  const rope = (x: SymbolicTensor) => graph.add(graph.mul(x, cos), graph.mul(rotateHalf(graph, x, headDim), sin));

  const attention = settings.attention ?? defaultAttention(settings.kvCache);
  if (settings.rowBlocks && settings.kvCache) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'buildDecoder: rowBlocks applies to graphs without a KV cache (training, scoring); leave it unset with kvCache.',
      details: { rowBlocks: settings.rowBlocks },
    });
  }
  if (settings.kvCache && attention.kind !== 'full') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `buildDecoder: a graph with a KV cache computes full attention (a decode step is one row; generate feeds a long prompt in chunks, prefillChunkTokens), got ${attention.kind}; leave attention unset with kvCache.`,
      details: { attention },
    });
  }
  // The RoPE tables with rows first, [batch, sequence, 1, headDim], as the row-blocked layer reads q and k.
  const ropeRows = settings.rowBlocks ? { cos: graph.unsqueeze(graph.cos(doubled), [2]), sin: graph.unsqueeze(graph.sin(doubled), [2]) } : undefined;
  // Full attention's additive mask [batch, 1, 1, sequence, total], total = capacity + sequence: 0 where visible, MASKED_SCORE elsewhere.
  let maskBias: SymbolicTensor | undefined;
  if (attention.kind === 'full') {
    const total = graph.reshape(graph.shape(attentionMask, 1, 2), []); // scalar
    const sequence = graph.reshape(graph.shape(inputIds, 1, 2), []);
    const keyIndex = graph.range(0, total, 1, 'int64'); // [total]
    const queryIndex = graph.range(graph.sub(total, sequence), total, 1, 'int64'); // [sequence]
    const causal = graph.not(graph.greater(graph.unsqueeze(keyIndex, [0]), graph.unsqueeze(queryIndex, [1]))); // [sequence, total]
    const padding = graph.cast(graph.unsqueeze(attentionMask, [1, 2, 3]), 'bool'); // [batch, 1, 1, 1, total]
    const visible = graph.cast(graph.and(padding, causal), 'float32');
    maskBias = graph.mul(graph.sub(visible, 1), -MASKED_SCORE); // [batch, 1, 1, sequence, total]
  }

  const biased = new Set(biasedModules(config));
  const linear = (x: SymbolicTensor, layer: number, module: LinearModule) => {
    const path = linearPath(layer, module);
    let y = graph.matmulTransposed(x, weights.float32(`${path}.weight`, x)); // weight [out, in], cast here (once x exists) when held in half precision
    if (biased.has(module)) y = graph.add(y, weights.plain(`${path}.bias`)); // bias [out]; part of the base layer, as PEFT's LoRA wraps it
    const adapter = settings.lora?.get(path);
    if (adapter) {
      const low = graph.matmul(x, graph.transpose(adapter.a)); // [..., rank]
      y = graph.add(y, graph.mul(graph.matmul(low, graph.transpose(adapter.b)), adapter.scale));
    }
    return y;
  };

  let hidden = weights.gatherRows('model.embed_tokens.weight', inputIds); // [batch, sequence, hidden]
  const newKeyValues: DecoderTensors['newKeyValues'] = [];
  const boundaries = [hidden];
  for (let layer = 0; layer < config.numHiddenLayers; layer++) {
    const prefix = `model.layers.${layer}`;
    const blocked: BlockedLayerContext | undefined = settings.rowBlocks
      ? { graph, config, weights, lora: settings.lora, layer, blockSize: settings.rowBlocks.blockSize }
      : undefined;
    let query: SymbolicTensor; // [batch, heads, sequence, headDim]
    let key: SymbolicTensor; // [batch, kvHeads, sequence, headDim]
    let value: SymbolicTensor;
    if (blocked) {
      const rowsFirst = blockedProjections(blocked, hidden, ropeRows!.cos, ropeRows!.sin); // [batch, sequence, heads, headDim] each
      [query, key, value] = [rowsFirst.query, rowsFirst.key, rowsFirst.value].map((y) => graph.transpose(y, [0, 2, 1, 3])) as [SymbolicTensor, SymbolicTensor, SymbolicTensor];
    } else {
      const x = rmsNorm(graph, hidden, weights.plain(`${prefix}.input_layernorm.weight`), rmsNormEps);
      const heads = (y: SymbolicTensor, count: number) => graph.transpose(graph.reshape(y, [0, 0, count, headDim]), [0, 2, 1, 3]);
      // Qwen3 normalises each head of q and k (q_norm, k_norm) before RoPE; Qwen2 and Llama do not.
      const qNorm = queryKeyNorm ? weights.plain(`${prefix}.self_attn.q_norm.weight`) : undefined;
      const kNorm = queryKeyNorm ? weights.plain(`${prefix}.self_attn.k_norm.weight`) : undefined;
      const normed = (y: SymbolicTensor, count: number, norm: SymbolicTensor | undefined) =>
        norm ? rmsNorm(graph, graph.reshape(y, [0, 0, count, headDim]), norm, rmsNormEps) : y;
      query = rope(heads(normed(linear(x, layer, 'q_proj'), numAttentionHeads, qNorm), numAttentionHeads)); // [batch, heads, sequence, headDim]
      key = rope(heads(normed(linear(x, layer, 'k_proj'), numKeyValueHeads, kNorm), numKeyValueHeads)); // [batch, kvHeads, sequence, headDim]
      value = heads(linear(x, layer, 'v_proj'), numKeyValueHeads);
    }
    let cache: LayerCache | undefined;
    if (settings.kvCache) {
      newKeyValues.push({ key, value });
      cache = {
        key: graph.input(cacheKeyName(layer), 'float32', ['batch', numKeyValueHeads, 'capacity', headDim]),
        value: graph.input(cacheValueName(layer), 'float32', ['batch', numKeyValueHeads, 'capacity', headDim]),
      };
    }
    // Grouped-query attention without copying keys: [batch, kvHeads, groups, sequence, headDim].
    const groupedQuery = graph.reshape(query, [0, numKeyValueHeads, groups, -1, headDim]);
    let attended: SymbolicTensor; // [batch, kvHeads, groups, sequence, headDim]
    switch (attention.kind) {
      case 'full':
        attended = fullAttention(graph, groupedQuery, key, value, maskBias!, headDim ** -0.5, cache);
        break;
      case 'blocked':
        // The same mask (key j visible to row i when attention_mask[b, j] = 1 and j <= i: no cache here), built per block.
        attended = graph.blockedAttention(groupedQuery, key, value, {
          blockSize: attention.blockSize,
          scale: headDim ** -0.5,
          causal: true,
          keyMask: attentionMask,
          maskedScore: MASKED_SCORE,
        });
        break;
      default:
        assertNever(attention);
    }
    const merged = graph.reshape(
      graph.transpose(graph.reshape(attended, [0, numAttentionHeads, -1, headDim]), [0, 2, 1, 3]),
      [0, 0, numAttentionHeads * headDim],
    ); // [batch, sequence, heads * headDim]
    if (blocked) {
      hidden = blockedOutput(blocked, hidden, merged);
    } else {
      hidden = graph.add(hidden, linear(merged, layer, 'o_proj'));
      const y = rmsNorm(graph, hidden, weights.plain(`${prefix}.post_attention_layernorm.weight`), rmsNormEps);
      const gate = linear(y, layer, 'gate_proj');
      const activated = graph.mul(graph.mul(gate, graph.sigmoid(gate)), linear(y, layer, 'up_proj')); // SiLU(gate) * up
      hidden = graph.add(hidden, linear(activated, layer, 'down_proj'));
    }
    boundaries.push(hidden);
  }
  hidden = rmsNorm(graph, hidden, weights.plain('model.norm.weight'), rmsNormEps);
  return { inputIds, attentionMask, positionIds, hidden, newKeyValues, boundaries, weights };
}

/**
 * logits = hidden @ W_head^T: [..., hidden] -> [..., vocab] (a tied head reads the embedding
 * itself; a half-precision head is cast in blocks of rows, WeightInitializers.head).
 */
export function lmHead(_graph: GraphBuilder, config: DecoderConfig, decoder: DecoderTensors): (hidden: SymbolicTensor) => SymbolicTensor {
  return (hidden) => decoder.weights.head(hidden, lmHeadName(config)); // W_head [vocab, hidden]
}

/** The decoder's final hidden states at `positions` ([batch, count] int64): [batch, count, hidden]. */
export function hiddenAt(graph: GraphBuilder, config: DecoderConfig, decoder: DecoderTensors, positions: SymbolicTensor): SymbolicTensor {
  const index = graph.expand(graph.unsqueeze(positions, [2]), [1, 1, config.hiddenSize]); // [batch, count, hidden]
  return graph.gatherElements(decoder.hidden, index, 1);
}

/**
 * The head's log-softmax at `positions` and the log-probabilities of `targets` ([batch, sequence]
 * int64) read there: the vocabulary-wide tensor is [batch, count, vocab], never [batch, sequence, vocab].
 */
export function logprobsAt(graph: GraphBuilder, config: DecoderConfig, decoder: DecoderTensors, targets: SymbolicTensor, positions: SymbolicTensor) {
  const logSoftmax = graph.logSoftmax(lmHead(graph, config, decoder)(hiddenAt(graph, config, decoder, positions)), -1); // [batch, count, vocab]
  const chosen = graph.unsqueeze(graph.gatherElements(targets, positions, 1), [2]); // [batch, count, 1]
  return { logSoftmax, logprobs: graph.squeeze(graph.gatherElements(logSoftmax, chosen, 2), [2]) };
}
