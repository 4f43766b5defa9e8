import { AgentFlowError } from '@agentflow/core';
import { biasedModules, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import type { DecoderLayerShape } from '../config/decoder-shape';

/** A float32 weight in row-major order (`dtype` absent means float32). */
export interface Float32WeightTensor {
  dtype?: 'float32';
  shape: number[];
  data: Float32Array;
}

/**
 * A half-precision weight in row-major order: raw float16 or bfloat16 bit patterns, bound to
 * the graphs as they are and cast to float32 at each use inside them (see WeightInitializers).
 */
export interface HalfWeightTensor {
  dtype: 'float16' | 'bfloat16';
  shape: number[];
  data: Uint16Array;
}

/** One weight as a model holds it: float32, or (matrices, with `loadModel`'s `dtype`) float16 / bfloat16. */
export type WeightTensor = Float32WeightTensor | HalfWeightTensor;

/** Element types a model's weights are held in: {@link WeightTensor}'s dtypes. */
export type WeightDtype = 'float32' | 'bfloat16' | 'float16';

/** The element type `tensor` is held in. */
export function weightDtypeOf(tensor: WeightTensor): WeightDtype {
  return tensor.dtype ?? 'float32';
}

/** True when `tensor` holds float16 or bfloat16 bit patterns. */
export function isHalfWeight(tensor: WeightTensor): tensor is HalfWeightTensor {
  return tensor.dtype === 'float16' || tensor.dtype === 'bfloat16';
}

/** The element type of the model's matrices: that of its embedding (float32 for an empty map). */
export function modelWeightDtype(weights: ModelWeights): WeightDtype {
  const embedding = weights.get('model.embed_tokens.weight');
  return embedding ? weightDtypeOf(embedding) : 'float32';
}

/**
 * The float32 values of a weight that `purpose` needs in float32 (a merge, a reference forward,
 * full-parameter training), or an error naming the weight and its dtype: code that writes into
 * weights in place cannot work on a half-precision copy.
 */
export function float32WeightData(name: string, tensor: WeightTensor, purpose: string): Float32Array {
  if (!isHalfWeight(tensor)) return tensor.data;
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${purpose} needs float32 weights, but ${name} is ${tensor.dtype}: load the model with dtype float32 (loadModel's \`dtype\`, policy.dtype).`,
    details: { name, dtype: tensor.dtype, purpose },
  });
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
