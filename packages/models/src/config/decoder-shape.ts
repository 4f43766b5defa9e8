/**
 * Upper bounds of a config.json's sizes, checked before anything is allocated from them, for every
 * decoder family. Generous: Qwen3-235B-A22B has 94 layers, hidden 4096, 64 heads, 4 kv heads,
 * head_dim 128, vocab 151936 and 40960 positions; Llama-3.1-405B 126 layers, hidden 16384, 128
 * heads, intermediate 53248 and 131072 positions; the largest open models stay well inside each
 * bound. A config past one (10^9 layers) is corrupt or hostile, not a model.
 */
export const DECODER_BOUNDS = {
  vocabSize: 4_194_304,
  hiddenSize: 65_536,
  intermediateSize: 262_144,
  layers: 1_024,
  heads: 1_024,
  headDim: 1_024,
  maxPositionEmbeddings: 16_777_216,
  /** Elements of one weight matrix: a Float32Array holds at most 2^32. */
  matrixElements: 2 ** 32,
  /** RoPE scaling's `factor` and its low/high frequency factors (Llama 3.1 uses 8, 1 and 4). */
  ropeFactor: 1_024,
} as const;

/** The bounds of {@link DECODER_BOUNDS} under their first name: they hold for every family, not Qwen3's alone. */
export const QWEN3_BOUNDS = DECODER_BOUNDS;

/**
 * The sizes of one decoder layer, which the shape rules constrain. `headDim` absent is
 * hiddenSize / numAttentionHeads, as transformers derives it when config.json has no head_dim.
 */
export interface DecoderLayerShape {
  hiddenSize: number;
  intermediateSize: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  headDim?: number;
}

/** {@link DecoderLayerShape} under its first name. */
export type Qwen3LayerShape = DecoderLayerShape;

/** What a caller's config calls the sizes the shape rules name; leave `headDim` out when it has no such key. */
export interface Qwen3ShapeKeys {
  hiddenSize: string;
  numAttentionHeads: string;
  numKeyValueHeads: string;
  headDim?: string;
}

/** One broken shape rule: the key to change and why, both in the caller's names ({@link Qwen3ShapeKeys}). */
export interface Qwen3ShapeIssue {
  key: string;
  message: string;
}

/** config.json's names of the sizes: the words of {@link qwen3ShapeIssues} unless a caller passes its own. */
export const QWEN3_HF_SHAPE_KEYS: Required<Qwen3ShapeKeys> = {
  hiddenSize: 'hidden_size',
  numAttentionHeads: 'num_attention_heads',
  numKeyValueHeads: 'num_key_value_heads',
  headDim: 'head_dim',
};

/** The width of one attention head: `headDim`, or hiddenSize / numAttentionHeads without it (transformers' rule, every family). */
export function qwen3HeadDim(shape: DecoderLayerShape): number {
  return shape.headDim ?? shape.hiddenSize / shape.numAttentionHeads;
}

/**
 * The shape rules of a decoder layer (Qwen2, Qwen3 and Llama alike), every broken one with the key
 * to change (none: the shape holds): whole heads (without `headDim`, hiddenSize a multiple of
 * numAttentionHeads), an even head width (rotary embeddings turn pairs of dimensions), and
 * grouped-query attention (numKeyValueHeads divides numAttentionHeads). `keys` words the messages
 * in the caller's names, config.json's by default, so a zod `superRefine` can add each issue at its
 * own key:
 * `for (const { key, message } of qwen3ShapeIssues(shape, keys)) context.addIssue({ code: 'custom', path: [key], message })`.
 * parseDecoderConfig refuses a config.json with any issue.
 */
export function qwen3ShapeIssues(shape: DecoderLayerShape, keys: Qwen3ShapeKeys = QWEN3_HF_SHAPE_KEYS): Qwen3ShapeIssue[] {
  const { hiddenSize, numAttentionHeads: heads, numKeyValueHeads: keyValueHeads } = shape;
  const headDim = qwen3HeadDim(shape);
  if (!Number.isInteger(headDim)) {
    const without = keys.headDim === undefined ? '' : ` when ${keys.headDim} is absent`;
    // No head width to check further: whole heads come first.
    return [{ key: keys.hiddenSize, message: `${keys.hiddenSize} must be a multiple of ${keys.numAttentionHeads} (${heads})${without}, got ${hiddenSize}` }];
  }
  const issues: Qwen3ShapeIssue[] = [];
  if (headDim % 2 !== 0) {
    issues.push(
      shape.headDim === undefined
        ? { key: keys.hiddenSize, message: `${keys.hiddenSize} / ${keys.numAttentionHeads} (${headDim}) must be even for rotary embeddings` }
        : { key: keys.headDim ?? 'headDim', message: `${keys.headDim ?? 'headDim'} must be even for rotary embeddings, got ${headDim}` },
    );
  }
  if (heads % keyValueHeads !== 0) {
    issues.push({ key: keys.numKeyValueHeads, message: `${keys.numKeyValueHeads} must divide ${keys.numAttentionHeads} (${heads}), got ${keyValueHeads}` });
  }
  return issues;
}
