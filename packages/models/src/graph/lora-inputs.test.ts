import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLoraAdapter } from '../lora/lora-adapter';
import { peftKey } from '../lora/peft-format';
import { loraInputName, peftGradients } from './lora-inputs';

describe('peftGradients', () => {
  const adapter = createLoraAdapter(getModelPreset('tiny'), { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] }, 1);
  const byInput = new Map<string, Float32Array>();
  for (const [path, matrices] of adapter.matrices) {
    byInput.set(loraInputName(path, 'A'), new Float32Array(matrices.a.length).fill(1));
    byInput.set(loraInputName(path, 'B'), new Float32Array(matrices.b.length).fill(2));
  }

  it('re-keys every matrix of the adapter by its PEFT key, in module order, sharing the arrays', () => {
    const byKey = peftGradients(adapter, byInput);
    const expectedKeys = [...adapter.matrices.keys()].flatMap((path) => [peftKey(path, 'A'), peftKey(path, 'B')]);
    expect([...byKey.keys()]).toEqual(expectedKeys);
    expect(byKey.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')).toBe(byInput.get(loraInputName('model.layers.0.self_attn.q_proj', 'A')));
    expect(byKey.size).toBe(2 * adapter.matrices.size);
  });

  it('names the missing matrix when the gradients come from another layout', () => {
    const partial = new Map([...byInput].filter(([name]) => !name.endsWith('v_proj.B')));
    expect(() => peftGradients(adapter, partial)).toThrow(/No gradient for base_model\.model\.model\.layers\.0\.self_attn\.v_proj\.lora_B\.weight/);
  });
});
