import { AgentFlowError } from '@agentflow/core';
import { BYTE_LEVEL_SPECIAL_TOKENS } from '../tokenizer/byte-level-tokenizer';
import type { Qwen3Config } from './qwen3-config';

/** Names of the built-in model shapes. */
export type ModelPresetName = 'tiny' | 'qwen3-0.6b-shape' | 'qwen3-8b-shape' | 'tiny-qwen3-vocab';

/** Ids the byte-level tokenizer gives its special tokens: after the 256 bytes. */
const byteLevelEos = 256 + BYTE_LEVEL_SPECIAL_TOKENS.indexOf('<|im_end|>');
const byteLevelEndOfText = 256 + BYTE_LEVEL_SPECIAL_TOKENS.indexOf('<|endoftext|>');

/** Qwen/Qwen3-0.6B's config.json. */
const QWEN3_0_6B_SHAPE: Qwen3Config = {
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
    tieWordEmbeddings: true,
    bosTokenId: 151643,
    eosTokenIds: [151645],
    initializerRange: 0.02,
};

/** Qwen/Qwen3-8B's config.json: the 0.6B's vocabulary, rope and special ids at 8.2B parameters, untied head. */
const QWEN3_8B_SHAPE: Qwen3Config = {
  ...QWEN3_0_6B_SHAPE,
  hiddenSize: 4096,
  intermediateSize: 12288,
  numHiddenLayers: 36,
  numAttentionHeads: 32,
  numKeyValueHeads: 8,
  headDim: 128,
  tieWordEmbeddings: false,
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
 */
export const MODEL_PRESETS: Record<ModelPresetName, Qwen3Config> = {
  tiny: {
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
    tieWordEmbeddings: true,
    eosTokenIds: [byteLevelEos, byteLevelEndOfText],
    initializerRange: 0.02,
  },
  'qwen3-0.6b-shape': QWEN3_0_6B_SHAPE,
  'qwen3-8b-shape': QWEN3_8B_SHAPE,
  // Qwen3-0.6B's vocabulary and special tokens (bos <|endoftext|>, eos <|im_end|>) at a tiny shape.
  'tiny-qwen3-vocab': {
    ...QWEN3_0_6B_SHAPE,
    hiddenSize: 32,
    intermediateSize: 64,
    numHiddenLayers: 2,
    numAttentionHeads: 2,
    numKeyValueHeads: 1,
    headDim: 16,
  },
};

/** The preset of that name (a copy), or a clear error listing the known names. */
export function getModelPreset(name: string): Qwen3Config {
  const preset = (MODEL_PRESETS as Record<string, Qwen3Config>)[name];
  if (!preset) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Unknown model preset ${JSON.stringify(name)}; expected one of ${Object.keys(MODEL_PRESETS).join(', ')}.`,
      details: { name },
    });
  }
  return { ...preset, eosTokenIds: [...preset.eosTokenIds] };
}
