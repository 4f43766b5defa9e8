import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { float16BitsToFloat32, float32ToFloat16Bits, type HostTensor, openSafetensors, writeSafetensors } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { toHfConfig } from '../config/qwen3-config';
import { writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
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

  it('saves float16 weights rounded to nearest even, and refuses values beyond its range', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(config, 5);
    await saveModelFolder(dir, model, { dtype: 'float16' });
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype).toBe('float16');
    const file = await openSafetensors(join(dir, 'model.safetensors'));
    expect(file.entries.get('model.norm.weight')!.dtype).toBe('float16');
    await file.close();
    const loaded = await loadModel(dir);
    const name = 'model.layers.0.mlp.down_proj.weight';
    const expected = Array.from(model.weights.get(name)!.data, (value) => float16BitsToFloat32(float32ToFloat16Bits(value)));
    expect(Array.from(loaded.weights.get(name)!.data)).toEqual(expected);
    model.weights.get(name)!.data[3] = 70000;
    await expect(saveModelFolder(mkdtempSync(join(tmpdir(), 'model-')), model, { dtype: 'float16' })).rejects.toThrow(
      /model\.layers\.0\.mlp\.down_proj\.weight has the value 70000 at index 3, beyond float16's range/,
    );
  });

  it('copies the tokenizer files of another folder, optional ones included', async () => {
    const source = mkdtempSync(join(tmpdir(), 'tokenizer-source-'));
    writeTokenizerFiles(source);
    writeFileSync(join(source, 'merges.txt'), '#version: 0.2\n');
    writeFileSync(join(source, 'generation_config.json'), '{"eos_token_id": [258, 256], "temperature": 0.6}\n');
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    await saveModelFolder(dir, createRandomModel(config, 4), { tokenizer: { copyFrom: source } });
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'merges.txt', 'generation_config.json']) {
      expect(readFileSync(join(dir, file), 'utf8'), file).toBe(readFileSync(join(source, file), 'utf8'));
    }
    expect(existsSync(join(dir, 'vocab.json'))).toBe(false);
    const empty = mkdtempSync(join(tmpdir(), 'tokenizer-source-'));
    await expect(saveModelFolder(mkdtempSync(join(tmpdir(), 'model-')), createRandomModel(config, 4), { tokenizer: { copyFrom: empty } })).rejects.toThrow(
      /tokenizer\.json is missing/,
    );
  });

  it('names the missing tensor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(config, 4);
    model.weights.delete('model.norm.weight');
    await saveModelFolder(dir, model);
    await expect(loadModel(dir)).rejects.toThrow(/model\.norm\.weight is missing/);
  });
});
