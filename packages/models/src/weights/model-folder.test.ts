import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HostTensor, writeSafetensors } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { toHfConfig } from '../config/qwen3-config';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';

const config = { ...getModelPreset('tiny'), hiddenSize: 16, intermediateSize: 16, headDim: 8, numHiddenLayers: 1 };

describe('HF model folders', () => {
  it('writes a complete folder that loads back identically', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(config, 4);
    await saveModelFolder(dir, model);
    const loaded = await loadModel(dir);
    expect(loaded.config).toEqual(config);
    expect([...loaded.weights.keys()].sort()).toEqual([...model.weights.keys()].sort());
    expect(loaded.weights.get('model.layers.0.self_attn.q_proj.weight')!.data).toEqual(model.weights.get('model.layers.0.self_attn.q_proj.weight')!.data);
    expect(createRandomModel(config, 4).weights.get('model.norm.weight')).toEqual(model.weights.get('model.norm.weight'));
  });

  it('loads sharded bf16 checkpoints through model.safetensors.index.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(config, 6);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(config)));
    const names = [...model.weights.keys()];
    const shards = [names.slice(0, 4), names.slice(4)];
    const weightMap: Record<string, string> = {};
    for (const [index, shard] of shards.entries()) {
      const file = `model-0000${index + 1}-of-00002.safetensors`;
      const tensors: Record<string, HostTensor> = {};
      for (const name of shard) {
        const { shape, data } = model.weights.get(name)!;
        // bf16: the top 16 bits of each float32
        tensors[name] = { dtype: 'bfloat16', shape, data: Uint16Array.from(new Uint32Array(data.slice().buffer), (bits) => bits >>> 16) };
        weightMap[name] = file;
      }
      await writeSafetensors(join(dir, file), tensors);
    }
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
    const loaded = await loadModel(dir);
    const original = model.weights.get(names[5]!)!.data;
    const restored = loaded.weights.get(names[5]!)!.data;
    restored.forEach((value, index) => {
        expect(Math.abs(value - original[index]!)).toBeLessThanOrEqual(Math.abs(original[index]!) / 128);
      });
  });

  it('names the missing tensor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(config, 4);
    model.weights.delete('model.norm.weight');
    await saveModelFolder(dir, model);
    await expect(loadModel(dir)).rejects.toThrow(/model\.norm\.weight is missing/);
  });
});
