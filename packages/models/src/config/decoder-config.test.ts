import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parameterCount } from '../engine/parameter-count';
import { expectedWeightShapes } from '../weights/weight-names';
import { parseDecoderConfig } from './decoder-config';
import { getModelPreset, MODEL_PRESETS, type ModelPresetName } from './presets';
import { toHfConfig } from './hf-config-json';
import { ropeInverseFrequencies } from './rope-scaling';

// The config.json files of the published checkpoints, as they are on the Hub.
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}.config.json`, import.meta.url), 'utf8'));
const qwen25Instruct7b = fixture('qwen2.5-7b-instruct');
const llama31Instruct8b = fixture('llama-3.1-8b-instruct');

describe('config.json of each family', () => {
  it("reads Qwen2.5-7B-Instruct's config.json as a Qwen2 decoder: q/k/v biases, no q/k norm, 7.62B parameters", () => {
    const config = parseDecoderConfig(qwen25Instruct7b);
    expect(config).toEqual(getModelPreset('qwen2.5-7b-shape'));
    expect(config.headDim).toBe(128); // hidden 3584 / 28 heads: Qwen2 configs have no head_dim
    const names = [...expectedWeightShapes(config).keys()];
    expect(names.filter((name) => name.startsWith('model.layers.0.self_attn.'))).toEqual([
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.q_proj.bias',
      'model.layers.0.self_attn.k_proj.weight',
      'model.layers.0.self_attn.k_proj.bias',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.v_proj.bias',
      'model.layers.0.self_attn.o_proj.weight',
    ]);
    expect(expectedWeightShapes(config).get('model.layers.0.self_attn.k_proj.bias')).toEqual([512]);
    // The total of the published checkpoint's safetensors index (15,231,233,024 bf16 bytes).
    expect(parameterCount(config)).toBe(7_615_616_512);
  });

  it("reads Llama-3.1-8B-Instruct's config.json: no biases, untied head, llama3 RoPE scaling, 8.03B parameters", () => {
    const config = parseDecoderConfig(llama31Instruct8b);
    expect(config).toEqual(getModelPreset('llama3.1-8b-shape'));
    expect(config.ropeScaling).toEqual({ type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
    expect(config.eosTokenIds).toEqual([128001, 128008, 128009]);
    const names = [...expectedWeightShapes(config).keys()];
    expect(names.some((name) => name.endsWith('.bias') || name.includes('self_attn.q_norm') || name.includes('self_attn.k_norm'))).toBe(false);
    expect(names.at(-1)).toBe('lm_head.weight');
    expect(parameterCount(config)).toBe(8_030_261_248); // 16,060,522,496 bf16 bytes in its index
  });

  it('takes the family from architectures when model_type is absent, and Qwen3 when both are', () => {
    const { model_type: _modelType, ...withoutType } = llama31Instruct8b;
    expect(parseDecoderConfig(withoutType).architecture).toBe('llama');
    expect(parseDecoderConfig({ hidden_size: 64, num_attention_heads: 4 }).architecture).toBe('qwen3');
  });

  it('defaults head_dim to hidden / heads and the sizes to the family config class', () => {
    const llama = parseDecoderConfig({ model_type: 'llama', hidden_size: 64, num_attention_heads: 4 });
    expect(llama).toMatchObject({ headDim: 16, vocabSize: 32000, intermediateSize: 11008, maxPositionEmbeddings: 2048, numKeyValueHeads: 4 });
    expect(parseDecoderConfig({ model_type: 'qwen2', hidden_size: 64, num_attention_heads: 4 })).toMatchObject({ headDim: 16, vocabSize: 151936 });
  });

  it.each(Object.keys(MODEL_PRESETS) as ModelPresetName[])('round-trips the %s preset through the config.json it writes', (name) => {
    const preset = getModelPreset(name);
    const hf = toHfConfig(preset);
    expect(hf.model_type).toBe(preset.architecture);
    expect(parseDecoderConfig(JSON.parse(JSON.stringify(hf)))).toEqual(preset);
  });

  it('writes each family as transformers names it', () => {
    expect(toHfConfig(getModelPreset('tiny-qwen2'))).toMatchObject({ architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', rope_scaling: null });
    expect(toHfConfig(getModelPreset('tiny-qwen2'))).not.toHaveProperty('head_dim');
    expect(toHfConfig(getModelPreset('tiny-llama'))).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      attention_bias: false,
      mlp_bias: false,
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    });
  });
});

describe('configs that are refused before anything is allocated', () => {
  it('names an unknown model_type and the supported ones', () => {
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, model_type: 'mistral', architectures: ['MistralForCausalLM'] }, 'm/config.json')).toThrow(
      'm/config.json: model_type "mistral" is not supported; supported: qwen2 (Qwen2, Qwen2.5), qwen3 (Qwen3), llama (Llama 2, Llama 3.x).',
    );
    const { model_type: _modelType, ...withoutType } = llama31Instruct8b;
    expect(() => parseDecoderConfig({ ...withoutType, architectures: ['GemmaForCausalLM'] })).toThrow(/architectures names "GemmaForCausalLM" and there is no model_type; supported: qwen2/);
    expect(() => parseDecoderConfig({ ...qwen25Instruct7b, architectures: ['LlamaForCausalLM'] })).toThrow(/model_type "qwen2" but architectures names "LlamaForCausalLM", a llama class/);
  });

  it('names the field of an inconsistent or out-of-bounds shape, in every family', () => {
    expect(() => parseDecoderConfig({ ...qwen25Instruct7b, num_attention_heads: 30 })).toThrow(
      'config.json: hidden_size must be a multiple of num_attention_heads (30) when head_dim is absent, got 3584.',
    );
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, num_key_value_heads: 5 })).toThrow(/num_key_value_heads must divide num_attention_heads \(32\), got 5/);
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, num_hidden_layers: 1e9 })).toThrow(/^Invalid Llama config in config\.json: num_hidden_layers: /);
    expect(() => parseDecoderConfig({ ...qwen25Instruct7b, vocab_size: 2 ** 30 })).toThrow(/vocab_size/);
    expect(() => parseDecoderConfig({ ...qwen25Instruct7b, use_sliding_window: true })).toThrow(/use_sliding_window=true is not supported/);
  });

  it('validates rope_scaling field by field, and refuses dynamic, yarn and longrope by name', () => {
    const scaling = llama31Instruct8b.rope_scaling;
    const { low_freq_factor: _low, ...withoutLow } = scaling;
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, rope_scaling: withoutLow })).toThrow(/rope_scaling\.low_freq_factor/);
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, rope_scaling: { ...scaling, high_freq_factor: 1 } })).toThrow(/rope_scaling\.high_freq_factor: high_freq_factor must be greater than low_freq_factor/);
    expect(() => parseDecoderConfig({ ...llama31Instruct8b, rope_scaling: { ...scaling, factor: 1e6 } })).toThrow(/rope_scaling\.factor/);
    for (const type of ['dynamic', 'yarn', 'longrope']) {
      expect(() => parseDecoderConfig({ ...qwen25Instruct7b, rope_scaling: { type, factor: 4 } })).toThrow(
        new RegExp(`rope_scaling\\.rope_type "${type}" is not supported.*; supported: "default", "linear", "llama3"`),
      );
    }
    expect(parseDecoderConfig({ ...qwen25Instruct7b, rope_scaling: { type: 'linear', factor: 2 } }).ropeScaling).toEqual({ type: 'linear', factor: 2 });
    // transformers 5 writes the base and the scaling in one rope_parameters object.
    const { rope_scaling: _scaling, rope_theta: _theta, ...v4Free } = llama31Instruct8b;
    const v5 = parseDecoderConfig({ ...v4Free, rope_parameters: { ...scaling, rope_theta: 500000 } });
    expect(v5).toEqual(getModelPreset('llama3.1-8b-shape'));
  });
});

describe('ropeInverseFrequencies', () => {
  it("keeps Llama 3.1's high frequencies, divides its low ones by 8 and blends those between", () => {
    const scaling = getModelPreset('llama3.1-8b-shape').ropeScaling;
    const plain = ropeInverseFrequencies(500000, 128, { type: 'default' });
    const scaled = ropeInverseFrequencies(500000, 128, scaling);
    plain.forEach((value, index) => {
      const wavelength = (2 * Math.PI) / value;
      if (wavelength < 8192 / 4) expect(scaled[index]).toBe(value);
      else if (wavelength > 8192) expect(scaled[index]).toBeCloseTo(value / 8, 15);
      else {
        expect(scaled[index]).toBeGreaterThan(value / 8);
        expect(scaled[index]).toBeLessThan(value);
      }
    });
    // Wavelengths of 2,048 to 8,192 positions (3 to 11 frequencies of 64 at head_dim 128) are blended.
    expect(plain.filter((value) => (2 * Math.PI) / value >= 2048 && (2 * Math.PI) / value <= 8192).length).toBeGreaterThan(2);
    expect(ropeInverseFrequencies(10000, 8, { type: 'linear', factor: 4 })).toEqual(ropeInverseFrequencies(10000, 8, { type: 'default' }).map((value) => value / 4));
  });
});
