import type { DecoderConfig } from '../config/decoder-config';
import { type AttentionSettings, defaultAttention } from '../graph/decoder-graph';

/**
 * The activation side of the memory plan: what each session's graph allocates per run, from the
 * model's widths and the session's tokens. The terms are per-token costs of this package's graphs
 * measured at the Qwen3-0.6B shape on the CPU (packages/models/bench/memory-bench.mjs,
 * docs/perf.md) and scaled with the widths, so another shape's figure is an extrapolation.
 */

/** One session a model opens. Token counts are padded tokens (rows x longest row). */
export type PlannedSession =
  | {
      kind: 'inference';
      /** E.g. 'generation and log-probs', 'reference'. */
      name: string;
      /** Rows run together (generation batch, or log-prob micro-batch rows). */
      rows: number;
      /** Tokens of the longest row: prompt + completion. */
      sequence: number;
      /** Tokens per row whose log-probs are taken (the completion); 0 for generation alone. */
      scored: number;
      /** Tokens per run when the prompt is fed in chunks (generate's prefillChunkTokens); default the whole sequence. */
      chunk?: number;
    }
  | {
      kind: 'training';
      name: string;
      /** Padded tokens of one micro-batch (rows x longest row). */
      tokens: number;
      /** Rows of one micro-batch. */
      rows: number;
      /** Completion tokens of one micro-batch (the LM head runs on these only). */
      completionTokens: number;
      /** Layer activations recomputed in the backward pass (TrainingGraphSettings.recompute). */
      recompute: boolean;
      /** The training graph's attention (TrainingGraphSettings.attention); default blocked, as the graph's. */
      attention?: AttentionSettings;
    }
  | {
      kind: 'scalar-head';
      name: string;
      rows: number;
      sequence: number;
      /** A training session (MSE and gradients) rather than scoring only. */
      training: boolean;
      recompute?: boolean;
      /** The scalar head's attention; default blocked, as its graph's (a decoder without a KV cache). */
      attention?: AttentionSettings;
    };

const FLOAT32 = 4;
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

// Activation coefficients, in float32 values, in units of the widths they scale with: marginal
// costs fitted to training steps measured at the Qwen3-0.6B shape on the CPU (five shapes, each
// within 0.5% with an intercept of -1.1 GB, the heap a process already has, which the plan leaves
// out: small batches come out up to 1.1 GB high; docs/perf.md).
/** Training, activations kept: values per token and layer, per unit of layer width. */
const TRAIN_KEPT_PER_WIDTH = 7.13;
/** Training, activations kept: attention-score values per layer, per head and (row length)^2. */
const TRAIN_ATTENTION_COPIES = 9.34;
/** Vocabulary-wide values per completion token in the training step (logits, log-softmax, their gradients). */
const TRAIN_VOCAB_COPIES = 12.25;
/**
 * Training, recomputed (`recompute: true`): the graph keeps the residual stream at each layer
 * boundary until the backward pass reaches it and recomputes one layer at a time. Fitted to eight
 * training steps measured at the Qwen3-0.6B shape on the CPU (256 to 2,048 tokens, 1 to 4 rows,
 * 32 to 128 completion tokens; each within 11%, six within 4%; docs/perf.md):
 * - values kept per token and layer, per unit of hidden size (the boundaries and what the arena
 *   holds beside them; from the growth with the layer count, 1,024 tokens, 6 to 14 layers);
 * - values per token of the layer being recomputed, per unit of layer width;
 * - attention-score copies of that layer, per head and (row length)^2;
 * - vocabulary-wide values per completion token (logits, log-softmax and their gradients);
 * - a constant per step (the session's own allocations).
 */
const TRAIN_RECOMPUTED_PER_HIDDEN = 3.6;
const TRAIN_RECOMPUTED_PER_WIDTH = 0.19;
const TRAIN_RECOMPUTED_ATTENTION_COPIES = 5.42;
const TRAIN_RECOMPUTED_VOCAB_COPIES = 3.72;
const TRAIN_RECOMPUTED_SESSION_BYTES = 0.2 * 2 ** 30;
/**
 * Blocked attention (AttentionSettings 'blocked'): score-sized values of the block being computed,
 * per head, query row of the block and key, counted from the backward loop's body (the block's
 * probabilities, their gradient before and after the row term, and the score gradient), not
 * fitted. One block is alive at a time in the whole graph, so nothing of it is per layer.
 */
const BLOCKED_ATTENTION_COPIES = 4;
/** Blocked attention without recomputation: per layer, head and token, the two row statistics the backward reads. */
const BLOCKED_ROW_STATISTICS = 2;
/** Inference: values per token per unit of layer width (one layer alive at a time). */
const INFER_PER_WIDTH = 1;
/** Inference: vocabulary-wide values per scored token (logits, log-softmax, entropy). */
const INFER_VOCAB_COPIES = 3;
/**
 * Inference: score-sized values alive at once, per head, query row and key: the scores, their
 * join with the cache's, the softmax and its new tokens' slice. Measured on the CPU at the 25M
 * shape (bench/bench-shapes.mjs), one scoring run of 2 rows x 2,048 tokens, peak RSS less the
 * plan's other terms: 3.59 score tensors (3.11 when each run concatenated the cache, issue #32).
 */
const INFER_SCORE_COPIES = 3.6;

/** The widths one decoder layer works with per token: hidden, q, k, v, and three MLP widths. */
export function layerWidth(config: DecoderConfig): number {
  const q = config.numAttentionHeads * config.headDim;
  const kv = config.numKeyValueHeads * config.headDim;
  return config.hiddenSize + q + 2 * kv + 3 * config.intermediateSize;
}

/** The values of one block of blocked attention: every head's scores for up to `blockSize` query rows against every key. */
function blockScores(config: DecoderConfig, rows: number, perRow: number, blockSize: number): number {
  return config.numAttentionHeads * rows * Math.min(blockSize, perRow) * perRow;
}

/**
 * Training-graph values: per-token and attention values of every layer, and the head's
 * vocabulary-wide ones. Full attention keeps score copies of [heads, row, row] (every layer's, or
 * with recomputation one layer's); blocked attention one block of rows at a time.
 */
function trainingValues(config: DecoderConfig, rows: number, perRow: number, completionTokens: number, recompute: boolean, attention: AttentionSettings) {
  const tokens = rows * perRow;
  const width = layerWidth(config);
  const layers = config.numHiddenLayers;
  const heads = config.numAttentionHeads;
  const blocked = attention.kind === 'blocked' ? BLOCKED_ATTENTION_COPIES * blockScores(config, rows, perRow, attention.blockSize) : 0;
  const head = TRAIN_VOCAB_COPIES * completionTokens * config.vocabSize;
  if (!recompute) {
    const perLayer = attention.kind === 'blocked' ? BLOCKED_ROW_STATISTICS * heads * tokens : TRAIN_ATTENTION_COPIES * heads * rows * perRow * perRow;
    const layerValues = layers * (tokens * TRAIN_KEPT_PER_WIDTH * width + perLayer) + blocked;
    return { layerValues, head, total: layerValues + head };
  }
  const recomputedAttention = attention.kind === 'blocked' ? blocked : TRAIN_RECOMPUTED_ATTENTION_COPIES * heads * rows * perRow * perRow; // one layer
  const layerValues =
    layers * tokens * TRAIN_RECOMPUTED_PER_HIDDEN * config.hiddenSize + tokens * TRAIN_RECOMPUTED_PER_WIDTH * width + recomputedAttention + TRAIN_RECOMPUTED_SESSION_BYTES / FLOAT32;
  const recomputedHead = TRAIN_RECOMPUTED_VOCAB_COPIES * completionTokens * config.vocabSize;
  return { layerValues, head: recomputedHead, total: layerValues + recomputedHead };
}

/** How a session's attention reads in the plan's detail. */
function attentionDetail(attention: AttentionSettings): string {
  return attention.kind === 'blocked' ? `, attention in ${attention.blockSize}-row blocks` : ', full attention';
}

export function sessionActivations(config: DecoderConfig, session: PlannedSession): { bytes: number; detail: string } {
  const width = layerWidth(config);
  const layers = config.numHiddenLayers;
  const vocab = config.vocabSize;
  const heads = config.numAttentionHeads;
  const kv = config.numKeyValueHeads * config.headDim;
  if (session.kind === 'training') {
    const attention = session.attention ?? defaultAttention(false);
    const values = trainingValues(config, session.rows, session.tokens / session.rows, session.completionTokens, session.recompute, attention);
    return {
      bytes: FLOAT32 * values.total,
      detail: `${session.tokens} tokens (${session.rows} rows, ${session.completionTokens} completion tokens)${session.recompute ? ', layers recomputed' : ''}${attentionDetail(attention)}: layers ${gib(FLOAT32 * values.layerValues)}, LM head ${gib(FLOAT32 * values.head)}`,
    };
  }
  if (session.kind === 'scalar-head') {
    // The scalar head's decoder has no KV cache: blocked attention unless the session says otherwise.
    const attention = session.attention ?? defaultAttention(false);
    const scoring =
      attention.kind === 'blocked'
        ? 3 * blockScores(config, session.rows, session.sequence, attention.blockSize)
        : 3 * heads * session.rows * session.sequence * session.sequence;
    const values = session.training
      ? trainingValues(config, session.rows, session.sequence, 0, session.recompute ?? false, attention).total
      : session.rows * session.sequence * INFER_PER_WIDTH * width + scoring;
    return {
      bytes: FLOAT32 * values,
      detail: `${session.rows} rows x ${session.sequence} tokens${session.training ? `, training${session.recompute ? ', layers recomputed' : ''}` : ''}${attentionDetail(attention)}`,
    };
  }
  // The KV cache: generate's capacity buffers (a slot per prompt and completion token of each row),
  // or in a scoring run every layer's keys and values (graph outputs, held to the end of the run).
  const cache = 2 * layers * kv * session.rows * session.sequence;
  const perRun = Math.min(session.chunk ?? session.sequence, session.sequence);
  // The head runs at the scored positions and the last one (sampling).
  const logits = INFER_VOCAB_COPIES * vocab * session.rows * (session.scored + 1);
  // A prompt fed in chunks: every chunk after the first attends to the whole capacity and to itself.
  const keys = perRun < session.sequence ? session.sequence + perRun : session.sequence;
  const inferenceScores = INFER_SCORE_COPIES * heads * session.rows * perRun * keys;
  const values = session.rows * perRun * INFER_PER_WIDTH * width + logits + cache + inferenceScores;
  return {
    bytes: Math.ceil(FLOAT32 * values), // whole bytes: the plan's sums stay exact
    detail: `${session.rows} rows x ${session.sequence} tokens, ${session.scored} scored a row: KV cache ${gib(FLOAT32 * cache)}, LM head ${gib(FLOAT32 * logits)}`,
  };
}

/** The graph (and so the ONNX Runtime session) a planned session runs on. */
export function graphOf(session: PlannedSession): string {
  if (session.kind === 'scalar-head') return session.training ? 'scalar-head training' : 'scalar head';
  return session.kind;
}
