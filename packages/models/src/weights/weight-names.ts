import { biasedModules, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import type { DecoderLayerShape } from '../config/decoder-shape';

/** A float32 tensor in row-major order (weights are kept as float32 in memory). */
export interface WeightTensor {
  shape: number[];
  data: Float32Array;
}

/** Weights by Hugging Face tensor name (`model.layers.0.self_attn.q_proj.weight`, ...). */
export type ModelWeights = Map<string, WeightTensor>;

/** The linear layers of one decoder layer, as PEFT's `target_modules` names them. */
export const LINEAR_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LinearModule = (typeof LINEAR_MODULES)[number];

/** `self_attn` or `mlp`: the block each linear module lives in. */
export function moduleBlock(module: LinearModule): 'self_attn' | 'mlp' {
  return module === 'gate_proj' || module === 'up_proj' || module === 'down_proj' ? 'mlp' : 'self_attn';
}

/** `model.layers.{layer}.{block}.{module}` without the `.weight` suffix. */
export function linearPath(layer: number, module: LinearModule): string {
  return `model.layers.${layer}.${moduleBlock(module)}.${module}`;
}

/** [out, in] of a linear module's weight (PyTorch's nn.Linear layout). */
export function linearShape(config: Required<DecoderLayerShape>, module: LinearModule): [number, number] {
  const queryWidth = config.numAttentionHeads * config.headDim;
  const keyValueWidth = config.numKeyValueHeads * config.headDim;
  switch (module) {
    case 'q_proj':
      return [queryWidth, config.hiddenSize];
    case 'k_proj':
    case 'v_proj':
      return [keyValueWidth, config.hiddenSize];
    case 'o_proj':
      return [config.hiddenSize, queryWidth];
    case 'gate_proj':
    case 'up_proj':
      return [config.intermediateSize, config.hiddenSize];
    case 'down_proj':
      return [config.hiddenSize, config.intermediateSize];
  }
}

/**
 * Every tensor a checkpoint of the config's family holds (Qwen3ForCausalLM, Qwen2ForCausalLM,
 * LlamaForCausalLM, by transformers' names), with its shape, in a stable order: each linear
 * module's `.weight` [out, in] and, where the family has one (biasedModules), its `.bias` [out];
 * Qwen3's `self_attn.q_norm` / `k_norm` [headDim]; `lm_head.weight` unless the head is tied.
 */
export function expectedWeightShapes(config: DecoderConfig): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  const biased = new Set(biasedModules(config));
  const queryKeyNorm = hasQueryKeyNorm(config);
  shapes.set('model.embed_tokens.weight', [config.vocabSize, config.hiddenSize]);
  for (let layer = 0; layer < config.numHiddenLayers; layer++) {
    const prefix = `model.layers.${layer}`;
    shapes.set(`${prefix}.input_layernorm.weight`, [config.hiddenSize]);
    for (const module of LINEAR_MODULES) {
      const [out, inputs] = linearShape(config, module);
      shapes.set(`${linearPath(layer, module)}.weight`, [out, inputs]);
      if (biased.has(module)) shapes.set(`${linearPath(layer, module)}.bias`, [out]);
    }
    if (queryKeyNorm) {
      shapes.set(`${prefix}.self_attn.q_norm.weight`, [config.headDim]);
      shapes.set(`${prefix}.self_attn.k_norm.weight`, [config.headDim]);
    }
    shapes.set(`${prefix}.post_attention_layernorm.weight`, [config.hiddenSize]);
  }
  shapes.set('model.norm.weight', [config.hiddenSize]);
  if (!config.tieWordEmbeddings) shapes.set('lm_head.weight', [config.vocabSize, config.hiddenSize]);
  return shapes;
}

/** The LM head's matrix: `lm_head.weight`, or the embedding when tied. */
export function lmHeadName(config: Pick<DecoderConfig, 'tieWordEmbeddings'>): string {
  return config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
}
