import { assertNever } from '@agentflow/core';
import { DECODER_ARCHITECTURES } from './decoder-architecture';
import type { DecoderConfig } from './decoder-config';
import { ropeScalingJson } from './rope-scaling';

/**
 * The `config.json` that Hugging Face transformers (and vLLM) load as the config's family:
 * `Qwen3ForCausalLM` (the keys Qwen3 checkpoints ship), `Qwen2ForCausalLM` (Qwen2.5's keys; head_dim
 * only when it differs from hidden_size / num_attention_heads, as Qwen2 configs have none) or
 * `LlamaForCausalLM` (Llama 3.1's keys). parseDecoderConfig reads it back to the same config.
 */
export function toHfConfig(config: DecoderConfig): Record<string, unknown> {
  const { architecture } = config;
  const common = {
    architectures: [DECODER_ARCHITECTURES[architecture].className],
    model_type: architecture,
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numHiddenLayers,
    num_attention_heads: config.numAttentionHeads,
    num_key_value_heads: config.numKeyValueHeads,
  };
  const tail = {
    initializer_range: config.initializerRange,
    ...(config.bosTokenId === undefined ? {} : { bos_token_id: config.bosTokenId }),
    eos_token_id: config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : config.eosTokenIds,
    torch_dtype: 'float32',
    transformers_version: '4.51.0',
  };
  const rope = { rope_theta: config.ropeTheta, rope_scaling: ropeScalingJson(config.ropeScaling) };
  switch (architecture) {
    case 'qwen3':
      return {
        ...common,
        head_dim: config.headDim,
        hidden_act: 'silu',
        max_position_embeddings: config.maxPositionEmbeddings,
        rms_norm_eps: config.rmsNormEps,
        ...rope,
        tie_word_embeddings: config.tieWordEmbeddings,
        attention_bias: config.attentionBias,
        attention_dropout: 0,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: config.numHiddenLayers,
        use_cache: true,
        ...tail,
      };
    case 'qwen2':
      return {
        ...common,
        ...(config.headDim * config.numAttentionHeads === config.hiddenSize ? {} : { head_dim: config.headDim }),
        hidden_act: 'silu',
        max_position_embeddings: config.maxPositionEmbeddings,
        rms_norm_eps: config.rmsNormEps,
        ...rope,
        tie_word_embeddings: config.tieWordEmbeddings,
        attention_dropout: 0,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: config.numHiddenLayers,
        use_cache: true,
        ...tail,
      };
    case 'llama':
      return {
        ...common,
        head_dim: config.headDim,
        hidden_act: 'silu',
        max_position_embeddings: config.maxPositionEmbeddings,
        rms_norm_eps: config.rmsNormEps,
        ...rope,
        tie_word_embeddings: config.tieWordEmbeddings,
        attention_bias: config.attentionBias,
        attention_dropout: 0,
        mlp_bias: config.mlpBias,
        pretraining_tp: 1,
        use_cache: true,
        ...tail,
      };
    default:
      return assertNever(architecture);
  }
}
