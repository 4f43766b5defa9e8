import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { expectedWeightShapes } from '../weights/weight-names';
import { decaysWeight, matchesWeightPattern, type TrainableSet, trainableSetSchema, trainableWeightNames } from './trainable-set';

const names = [...expectedWeightShapes({ ...getModelPreset('tiny'), tieWordEmbeddings: false }).keys()];

describe('trainable sets', () => {
  it('parses the config block: lora, or full with frozen patterns (default none); nothing else', () => {
    const lora: TrainableSet = trainableSetSchema.parse({ kind: 'lora' });
    expect(lora).toEqual({ kind: 'lora' });
    expect(trainableSetSchema.parse({ kind: 'full' })).toEqual({ kind: 'full', frozen: [] });
    expect(trainableSetSchema.parse({ kind: 'full', frozen: ['model.embed_tokens.weight'] })).toEqual({ kind: 'full', frozen: ['model.embed_tokens.weight'] });
    expect(trainableSetSchema.safeParse({ kind: 'lora', frozen: [] }).success).toBe(false);
    expect(trainableSetSchema.safeParse({ kind: 'full', frozen: [''] }).success).toBe(false);
    expect(trainableSetSchema.safeParse({ kind: 'partial' }).success).toBe(false);
  });

  it('matches whole names, `*` standing for any run of characters, dots included', () => {
    expect(matchesWeightPattern('model.layers.*.input_layernorm.weight', 'model.layers.1.input_layernorm.weight')).toBe(true);
    expect(matchesWeightPattern('model.layers.*.input_layernorm.weight', 'model.layers.1.post_attention_layernorm.weight')).toBe(false);
    expect(matchesWeightPattern('*norm.weight', 'model.layers.0.self_attn.q_norm.weight')).toBe(true);
    expect(matchesWeightPattern('model.norm', 'model.norm.weight')).toBe(false);
    // A dot is a dot, not any character.
    expect(matchesWeightPattern('model.norm.weight', 'model_norm_weight')).toBe(false);
    expect(trainableWeightNames(names, ['model.layers.*'])).toEqual(['model.embed_tokens.weight', 'model.norm.weight', 'lm_head.weight']);
    expect(trainableWeightNames(names)).toEqual(names);
  });

  it('names a pattern that matches no weight, and refuses to freeze every weight', () => {
    expect(() => trainableWeightNames(names, ['model.norm.weight', 'model.layers.*.mlp.bias'])).toThrow(/"model\.layers\.\*\.mlp\.bias" matches no weight/);
    expect(() => trainableWeightNames(names, ['model.*', 'lm_head.weight'])).toThrow(/freeze every weight/);
  });

  it('decays matrices, never norms or biases', () => {
    expect(names.filter((name) => !decaysWeight(name)).every((name) => name.endsWith('norm.weight'))).toBe(true);
    expect(decaysWeight('model.layers.0.self_attn.q_norm.weight')).toBe(false);
    expect(decaysWeight('model.layers.0.self_attn.q_proj.bias')).toBe(false);
    expect(decaysWeight('model.layers.0.self_attn.q_proj.weight')).toBe(true);
    expect(decaysWeight('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')).toBe(true);
  });
});
