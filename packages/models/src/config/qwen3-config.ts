import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { readFolderJson, requiredFolderFile } from '../weights/folder-files';

/**
 * Upper bounds of a config.json's sizes, checked before anything is allocated from them. Generous:
 * Qwen3-235B-A22B has 94 layers, hidden 4096, 64 heads, 4 kv heads, head_dim 128, vocab 151936 and
 * 40960 positions; the largest open models stay well inside each bound. A config past one (10^9
 * layers) is corrupt or hostile, not a model.
 */
export const QWEN3_BOUNDS = {
  vocabSize: 4_194_304,
  hiddenSize: 65_536,
  intermediateSize: 262_144,
  layers: 1_024,
  heads: 1_024,
  headDim: 1_024,
  maxPositionEmbeddings: 16_777_216,
  /** Elements of one weight matrix: a Float32Array holds at most 2^32. */
  matrixElements: 2 ** 32,
} as const;

/**
 * The fields of a Hugging Face Qwen3 `config.json` that change the maths. Defaults are those of
 * `transformers.Qwen3Config` (transformers 4.51+, `configuration_qwen3.py`); unknown keys pass through
 * untouched so that a real checkpoint's config loads.
 */
export const qwen3HfConfigSchema = z
  .object({
    vocab_size: z.number().int().positive().max(QWEN3_BOUNDS.vocabSize).default(151936).describe('Rows of the embedding and the LM head.'),
    hidden_size: z.number().int().positive().max(QWEN3_BOUNDS.hiddenSize).default(4096).describe('Width of the residual stream.'),
    intermediate_size: z.number().int().positive().max(QWEN3_BOUNDS.intermediateSize).default(22016).describe('Width of the SiLU-gated MLP.'),
    num_hidden_layers: z.number().int().positive().max(QWEN3_BOUNDS.layers).default(32).describe('Number of decoder layers.'),
    num_attention_heads: z.number().int().positive().max(QWEN3_BOUNDS.heads).default(32).describe('Query heads per layer.'),
    num_key_value_heads: z
      .number()
      .int()
      .positive()
      .max(QWEN3_BOUNDS.heads)
      .optional()
      .describe('Key/value heads (grouped-query attention); defaults to num_attention_heads.'),
    head_dim: z
      .number()
      .int()
      .positive()
      .max(QWEN3_BOUNDS.headDim)
      .optional()
      .describe('Width of one head; Qwen3 sets it explicitly (128) even when hidden/heads differs.'),
    hidden_act: z.literal('silu').default('silu').describe('MLP activation; Qwen3 uses SiLU only.'),
    max_position_embeddings: z.number().int().positive().max(QWEN3_BOUNDS.maxPositionEmbeddings).default(32768).describe('Longest sequence the model supports.'),
    rms_norm_eps: z.number().positive().default(1e-6).describe('Epsilon inside every RMSNorm.'),
    rope_theta: z.number().positive().optional().describe('RoPE base (transformers 4.x key).'),
    rope_parameters: z
      .object({
        rope_type: z.string().default('default').describe('Only "default" RoPE is supported.'),
        rope_theta: z.number().positive().optional().describe('RoPE base (transformers 5.x key).'),
      })
      .passthrough()
      .nullish()
      .describe('transformers 5.x RoPE settings.'),
    rope_scaling: z
      .object({ rope_type: z.string().optional(), type: z.string().optional() })
      .passthrough()
      .nullish()
      .describe('RoPE scaling (YaRN etc.); only absent or "default" is supported.'),
    tie_word_embeddings: z.boolean().default(false).describe('LM head shares the embedding matrix.'),
    attention_bias: z.boolean().default(false).describe('Qwen3 has no q/k/v/o bias; true is not supported.'),
    use_sliding_window: z.boolean().default(false).describe('Sliding-window attention; not supported.'),
    bos_token_id: z.number().int().nullish().describe('Begin-of-sequence token id.'),
    eos_token_id: z
      .union([z.number().int(), z.array(z.number().int())])
      .nullish()
      .describe('End-of-sequence token id(s).'),
    initializer_range: z.number().positive().default(0.02).describe('Std of the random initialisation.'),
  })
  .passthrough();

/** A validated Qwen3 configuration, in the names this package uses. */
export interface Qwen3Config {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  headDim: number;
  maxPositionEmbeddings: number;
  rmsNormEps: number;
  ropeTheta: number;
  tieWordEmbeddings: boolean;
  bosTokenId?: number;
  eosTokenIds: number[];
  initializerRange: number;
}

/**
 * The sizes of one decoder layer, which the shape rules constrain. `headDim` absent is
 * hiddenSize / numAttentionHeads, as transformers derives it when config.json has no head_dim.
 */
export interface Qwen3LayerShape {
  hiddenSize: number;
  intermediateSize: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  headDim?: number;
}

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

/** The width of one attention head: `headDim`, or hiddenSize / numAttentionHeads without it (transformers' rule). */
export function qwen3HeadDim(shape: Qwen3LayerShape): number {
  return shape.headDim ?? shape.hiddenSize / shape.numAttentionHeads;
}

/**
 * The shape rules of a Qwen3 decoder, every broken one with the key to change (none: the shape
 * holds): whole heads (without `headDim`, hiddenSize a multiple of numAttentionHeads), an even
 * head width (rotary embeddings turn pairs of dimensions), and grouped-query attention
 * (numKeyValueHeads divides numAttentionHeads). `keys` words the messages in the caller's names,
 * config.json's by default, so a zod `superRefine` can add each issue at its own key:
 * `for (const { key, message } of qwen3ShapeIssues(shape, keys)) context.addIssue({ code: 'custom', path: [key], message })`.
 * parseQwen3Config refuses a config.json with any issue.
 */
export function qwen3ShapeIssues(shape: Qwen3LayerShape, keys: Qwen3ShapeKeys = QWEN3_HF_SHAPE_KEYS): Qwen3ShapeIssue[] {
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

/** Default RoPE base of `transformers.Qwen3Config`. */
const DEFAULT_ROPE_THETA = 10000;

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_CONFIG', message, details });
}

/** Validates a parsed `config.json` object; `source` names it in errors. */
export function parseQwen3Config(raw: unknown, source = 'config.json'): Qwen3Config {
  const parsed = qwen3HfConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalid(`Invalid Qwen3 config in ${source}: ${formatZodIssues(parsed.error).join("; ")}`, { source });
  }
  const hf = parsed.data;
  const numKeyValueHeads = hf.num_key_value_heads ?? hf.num_attention_heads;
  const shape: Qwen3LayerShape = {
    hiddenSize: hf.hidden_size,
    intermediateSize: hf.intermediate_size,
    numAttentionHeads: hf.num_attention_heads,
    numKeyValueHeads,
    ...(hf.head_dim === undefined ? {} : { headDim: hf.head_dim }),
  };
  const issues = qwen3ShapeIssues(shape);
  if (issues.length > 0) {
    throw invalid(`${source}: ${issues.map((issue) => issue.message).join('; ')}.`, { source, keys: issues.map((issue) => issue.key) });
  }
  const headDim = qwen3HeadDim(shape);
  if (hf.attention_bias) {
    throw invalid(`${source}: attention_bias=true is not supported (Qwen3 checkpoints have none).`, { source });
  }
  const matrices = [
    ['vocab_size x hidden_size (the embedding)', hf.vocab_size * hf.hidden_size],
    ['intermediate_size x hidden_size (the MLP)', hf.intermediate_size * hf.hidden_size],
    ['num_attention_heads x head_dim x hidden_size (q_proj)', hf.num_attention_heads * headDim * hf.hidden_size],
  ] as const;
  for (const [what, elements] of matrices) {
    if (elements > QWEN3_BOUNDS.matrixElements) {
      throw invalid(`${source}: ${what} is ${elements} elements; one weight matrix holds at most 2^32 (${QWEN3_BOUNDS.matrixElements}).`, {
        source,
        elements,
      });
    }
  }
  if (hf.use_sliding_window) {
    throw invalid(`${source}: use_sliding_window=true is not supported.`, { source });
  }
  for (const [key, rope] of [
    ['rope_scaling', hf.rope_scaling],
    ['rope_parameters', hf.rope_parameters],
  ] as const) {
    const ropeType = rope ? (rope.rope_type ?? (rope as { type?: string }).type ?? 'default') : 'default';
    if (ropeType !== 'default') {
      throw invalid(`${source}: ${key}.rope_type ${JSON.stringify(ropeType)} is not supported; only "default" RoPE is.`, {
        source,
        ropeType,
      });
    }
  }
  const eos = hf.eos_token_id;
  return {
    vocabSize: hf.vocab_size,
    hiddenSize: hf.hidden_size,
    intermediateSize: hf.intermediate_size,
    numHiddenLayers: hf.num_hidden_layers,
    numAttentionHeads: hf.num_attention_heads,
    numKeyValueHeads,
    headDim,
    maxPositionEmbeddings: hf.max_position_embeddings,
    rmsNormEps: hf.rms_norm_eps,
    ropeTheta: hf.rope_parameters?.rope_theta ?? hf.rope_theta ?? DEFAULT_ROPE_THETA,
    tieWordEmbeddings: hf.tie_word_embeddings,
    ...(typeof hf.bos_token_id === 'number' ? { bosTokenId: hf.bos_token_id } : {}),
    eosTokenIds: eos === null || eos === undefined ? [] : Array.isArray(eos) ? eos : [eos],
    initializerRange: hf.initializer_range,
  };
}

/**
 * Reads and validates `dir/config.json`: a regular file inside the folder, at most
 * MAX_FOLDER_JSON_BYTES of UTF-8 JSON, with every size inside {@link QWEN3_BOUNDS}.
 */
export function loadQwen3Config(dir: string): Qwen3Config {
  const path = requiredFolderFile(dir, 'config.json', 'expected a Hugging Face model folder');
  return parseQwen3Config(readFolderJson(path), path);
}

/** The `config.json` that Hugging Face transformers loads as `Qwen3ForCausalLM`. */
export function toHfConfig(config: Qwen3Config): Record<string, unknown> {
  return {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numHiddenLayers,
    num_attention_heads: config.numAttentionHeads,
    num_key_value_heads: config.numKeyValueHeads,
    head_dim: config.headDim,
    hidden_act: 'silu',
    max_position_embeddings: config.maxPositionEmbeddings,
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: config.tieWordEmbeddings,
    attention_bias: false,
    attention_dropout: 0,
    use_sliding_window: false,
    sliding_window: null,
    max_window_layers: config.numHiddenLayers,
    use_cache: true,
    initializer_range: config.initializerRange,
    ...(config.bosTokenId === undefined ? {} : { bos_token_id: config.bosTokenId }),
    eos_token_id: config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : config.eosTokenIds,
    torch_dtype: 'float32',
    transformers_version: '4.51.0',
  };
}
