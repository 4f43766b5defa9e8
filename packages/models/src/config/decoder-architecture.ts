import type { LinearModule } from '../weights/weight-names';

/** The decoder families this package runs, by config.json's `model_type`. */
export type DecoderArchitecture = 'qwen2' | 'qwen3' | 'llama';

/** What differs between the families, and how config.json names each. */
export interface DecoderArchitectureInfo {
  /** config.json's `model_type`. */
  modelType: DecoderArchitecture;
  /** config.json's `architectures[0]`: the transformers class that loads the folder. */
  className: string;
  /** The checkpoints it covers, for messages. */
  family: string;
  /** q and k are RMS-normalised per head before RoPE (`self_attn.q_norm` / `k_norm`). */
  queryKeyNorm: boolean;
  /**
   * The transformers config's defaults for the sizes a config.json may leave out
   * (`Qwen2Config`, `Qwen3Config`, `LlamaConfig` of transformers 4.51).
   */
  defaults: {
    vocabSize: number;
    hiddenSize: number;
    intermediateSize: number;
    numHiddenLayers: number;
    numAttentionHeads: number;
    maxPositionEmbeddings: number;
    rmsNormEps: number;
    ropeTheta: number;
  };
}

const QWEN_DEFAULTS = {
  vocabSize: 151936,
  hiddenSize: 4096,
  intermediateSize: 22016,
  numHiddenLayers: 32,
  numAttentionHeads: 32,
  maxPositionEmbeddings: 32768,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
};

/**
 * The supported families. Qwen2 (Qwen2 and Qwen2.5): biases on q/k/v (none on o), no q/k norm.
 * Qwen3: q/k norm, biases on q/k/v/o only with `attention_bias` (no published checkpoint).
 * Llama (Llama 2, 3, 3.1, 3.2, 3.3): no q/k norm, q/k/v/o biases with `attention_bias` and MLP
 * biases with `mlp_bias` (both false in Meta's checkpoints), `rope_scaling` of type llama3 from 3.1 on.
 */
export const DECODER_ARCHITECTURES: Readonly<Record<DecoderArchitecture, DecoderArchitectureInfo>> = {
  qwen2: { modelType: 'qwen2', className: 'Qwen2ForCausalLM', family: 'Qwen2, Qwen2.5', queryKeyNorm: false, defaults: QWEN_DEFAULTS },
  qwen3: { modelType: 'qwen3', className: 'Qwen3ForCausalLM', family: 'Qwen3', queryKeyNorm: true, defaults: QWEN_DEFAULTS },
  llama: {
    modelType: 'llama',
    className: 'LlamaForCausalLM',
    family: 'Llama 2, Llama 3.x',
    queryKeyNorm: false,
    defaults: {
      vocabSize: 32000,
      hiddenSize: 4096,
      intermediateSize: 11008,
      numHiddenLayers: 32,
      numAttentionHeads: 32,
      maxPositionEmbeddings: 2048,
      rmsNormEps: 1e-6,
      ropeTheta: 10000,
    },
  },
};

/** `qwen2 (Qwen2, Qwen2.5), qwen3 (Qwen3), llama (Llama 2, Llama 3.x)`: the supported model_types, for messages. */
export function supportedArchitecturesText(): string {
  return Object.values(DECODER_ARCHITECTURES)
    .map((info) => `${info.modelType} (${info.family})`)
    .join(', ');
}

/**
 * What of a layer depends on the family: `architecture` (default qwen3) and config.json's
 * `attention_bias` and `mlp_bias` (default false). A {@link DecoderConfig} is one; a bare layer
 * shape without them is a Qwen3 layer.
 */
export interface DecoderLayerFeatures {
  architecture?: DecoderArchitecture;
  attentionBias?: boolean;
  mlpBias?: boolean;
}

const ATTENTION_MODULES: readonly LinearModule[] = ['q_proj', 'k_proj', 'v_proj', 'o_proj'];
const MLP_MODULES: readonly LinearModule[] = ['gate_proj', 'up_proj', 'down_proj'];

/**
 * The linear modules that carry a bias (`<module>.bias`, [out]), in LINEAR_MODULES order: Qwen2's
 * q/k/v always (its o_proj has none, and its config has no attention_bias); Qwen3's and Llama's
 * q/k/v/o with `attention_bias`; Llama's gate/up/down with `mlp_bias`. Biases are part of the base
 * layer: never LoRA targets, and never weight-decayed.
 */
export function biasedModules(features: DecoderLayerFeatures): readonly LinearModule[] {
  const architecture = features.architecture ?? 'qwen3';
  if (architecture === 'qwen2') return ATTENTION_MODULES.slice(0, 3);
  const attention = features.attentionBias ? ATTENTION_MODULES : [];
  const mlp = architecture === 'llama' && features.mlpBias ? MLP_MODULES : [];
  return [...attention, ...mlp];
}

/** Whether the layer normalises q and k per head (Qwen3's `q_norm` / `k_norm`). */
export function hasQueryKeyNorm(features: DecoderLayerFeatures): boolean {
  return DECODER_ARCHITECTURES[features.architecture ?? 'qwen3'].queryKeyNorm;
}
