import { describe, expect, it } from 'vitest';
import { getModelPreset } from './presets';
import { parseQwen3Config, qwen3ShapeIssues, toHfConfig } from './qwen3-config';

// The fields of Qwen/Qwen3-0.6B's config.json that change the maths (as published on the Hub).
const qwen3SmallHf = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  max_position_embeddings: 40960,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  rope_scaling: null,
  tie_word_embeddings: true,
  vocab_size: 151936,
  bos_token_id: 151643,
  eos_token_id: 151645,
  attention_bias: false,
  torch_dtype: 'bfloat16',
};

describe('Qwen3 config', () => {
  it('reads a real Qwen3 config, including head_dim != hidden / heads', () => {
    const config = parseQwen3Config(qwen3SmallHf);
    expect(config).toMatchObject({ headDim: 128, numKeyValueHeads: 8, ropeTheta: 1e6, tieWordEmbeddings: true, eosTokenIds: [151645] });
    expect(config.hiddenSize / config.numAttentionHeads).not.toBe(config.headDim);
    expect(config).toEqual({ ...getModelPreset('qwen3-0.6b-shape'), initializerRange: 0.02 });
  });

  it('takes rope_theta from transformers 5 rope_parameters and defaults the rest like Qwen3Config', () => {
    const config = parseQwen3Config({ hidden_size: 64, num_attention_heads: 4, rope_parameters: { rope_type: 'default', rope_theta: 5e5 } });
    expect(config.ropeTheta).toBe(5e5);
    expect(config.headDim).toBe(16);
    expect(config.numKeyValueHeads).toBe(4);
  });

  it('round-trips through the HF config.json it writes', () => {
    const tiny = getModelPreset('tiny');
    const hf = toHfConfig(tiny);
    expect(hf.architectures).toEqual(['Qwen3ForCausalLM']);
    expect(parseQwen3Config(hf)).toEqual(tiny);
  });

  it('has a Qwen3-8B shape that round-trips through config.json (8.19B parameters, untied head)', () => {
    const config = getModelPreset('qwen3-8b-shape');
    expect(parseQwen3Config(toHfConfig(config))).toEqual(config);
    const { hiddenSize: h, intermediateSize: m, numHiddenLayers: layers, vocabSize: v, headDim: d } = config;
    const attention = h * d * (config.numAttentionHeads * 2 + config.numKeyValueHeads * 2) + 2 * d;
    const parameters = 2 * v * h + layers * (attention + 3 * h * m + 2 * h) + h;
    expect(parameters).toBe(8_190_735_360);
  });

  it('rejects invalid or unsupported configs with the offending value', () => {
    expect(() => parseQwen3Config({ ...qwen3SmallHf, hidden_size: -1 })).toThrow(/hidden_size/);
    expect(() => parseQwen3Config({ ...qwen3SmallHf, num_key_value_heads: 5 })).toThrow(/num_key_value_heads must divide num_attention_heads \(16\), got 5/);
    expect(() => parseQwen3Config({ ...qwen3SmallHf, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toThrow(/"yarn" is not supported/);
    expect(() => parseQwen3Config({ ...qwen3SmallHf, hidden_act: 'gelu' })).toThrow(/hidden_act/);
    expect(() => getModelPreset('huge')).toThrow(/tiny, qwen3-0.6b-shape/);
  });
});

describe('qwen3ShapeIssues', () => {
  const planner = { hiddenSize: 'hiddenSize', numAttentionHeads: 'heads', numKeyValueHeads: 'keyValueHeads' };

  it('finds none in a real shape, with or without head_dim', () => {
    expect(qwen3ShapeIssues({ hiddenSize: 1024, intermediateSize: 3072, numAttentionHeads: 16, numKeyValueHeads: 8, headDim: 128 })).toEqual([]);
    expect(qwen3ShapeIssues({ hiddenSize: 128, intermediateSize: 256, numAttentionHeads: 4, numKeyValueHeads: 4 }, planner)).toEqual([]);
  });

  it("names the key to change in the caller's words, every broken rule at once", () => {
    expect(qwen3ShapeIssues({ hiddenSize: 30, intermediateSize: 8, numAttentionHeads: 4, numKeyValueHeads: 3 }, planner)).toEqual([
      { key: 'hiddenSize', message: 'hiddenSize must be a multiple of heads (4), got 30' },
    ]);
    expect(qwen3ShapeIssues({ hiddenSize: 12, intermediateSize: 8, numAttentionHeads: 4, numKeyValueHeads: 3 }, planner)).toEqual([
      { key: 'hiddenSize', message: 'hiddenSize / heads (3) must be even for rotary embeddings' },
      { key: 'keyValueHeads', message: 'keyValueHeads must divide heads (4), got 3' },
    ]);
    expect(qwen3ShapeIssues({ hiddenSize: 64, intermediateSize: 8, numAttentionHeads: 4, numKeyValueHeads: 4, headDim: 5 })).toEqual([
      { key: 'head_dim', message: 'head_dim must be even for rotary embeddings, got 5' },
    ]);
  });

  it('is the rule parseQwen3Config applies to config.json', () => {
    expect(() => parseQwen3Config({ hidden_size: 30, num_attention_heads: 4 }, 'x/config.json')).toThrow(
      'x/config.json: hidden_size must be a multiple of num_attention_heads (4) when head_dim is absent, got 30.',
    );
    expect(() => parseQwen3Config({ hidden_size: 12, num_attention_heads: 4, num_key_value_heads: 3 })).toThrow(
      'config.json: hidden_size / num_attention_heads (3) must be even for rotary embeddings; num_key_value_heads must divide num_attention_heads (4), got 3.',
    );
  });
});
