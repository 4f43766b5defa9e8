import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
  type HostTensor,
  openSafetensors,
  writeSafetensors,
} from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { toHfConfig } from '../config/qwen3-config';
import { writeTokenizerFiles } from '../tokenizer/byte-level-tokenizer';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';
import { DEFAULT_MAX_SHARD_BYTES, planShards } from './shard-plan';

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

  it('writes generation_config.json as transformers does: bos and eos as config.json has them, the pad token, do_sample', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    await saveModelFolder(dir, createRandomModel({ ...config, bosTokenId: 256, eosTokenIds: [258] }, 4));
    expect(readFileSync(join(dir, 'generation_config.json'), 'utf8')).toBe('{\n  "bos_token_id": 256,\n  "do_sample": true,\n  "eos_token_id": 258,\n  "pad_token_id": 256\n}\n');
    await saveModelFolder(dir, createRandomModel({ ...config, eosTokenIds: [258, 256] }, 4), { tokenizer: null, padTokenId: 7 });
    expect(JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'))).toEqual({ do_sample: true, eos_token_id: [258, 256], pad_token_id: 7 });
  });
});

describe('sharded HF model folders', () => {
  const sharded = { ...config, numHiddenLayers: 2 };
  const weightBytes = (model: ReturnType<typeof createRandomModel>, bytesPerValue: number) =>
    [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length * bytesPerValue, 0);

  it('cuts tensors in order as transformers does, an oversized tensor alone', () => {
    const tensors = [
      { name: 'a', bytes: 40 },
      { name: 'b', bytes: 60 },
      { name: 'c', bytes: 1 },
      { name: 'd', bytes: 250 },
      { name: 'e', bytes: 50 },
      { name: 'f', bytes: 50 },
    ];
    const plan = planShards(tensors, 100);
    expect(plan.shards.map((shard) => shard.names)).toEqual([['a', 'b'], ['c'], ['d'], ['e', 'f']]);
    expect(plan.shards.map((shard) => shard.file)).toEqual(['model-00001-of-00004.safetensors', 'model-00002-of-00004.safetensors', 'model-00003-of-00004.safetensors', 'model-00004-of-00004.safetensors']);
    expect(plan.totalBytes).toBe(451);
    expect(planShards(tensors, 451).shards).toEqual([{ file: 'model.safetensors', names: ['a', 'b', 'c', 'd', 'e', 'f'], bytes: 451 }]);
    expect(DEFAULT_MAX_SHARD_BYTES).toBe(5e9);
    expect(() => planShards(tensors, 0)).toThrow(/maxShardBytes must be a positive whole number of bytes, got 0/);
  });

  it('saves shards with an index whose weight_map covers every weight, and loads them back bit-exact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    const model = createRandomModel(sharded, 8);
    const maxShardBytes = 16 * 1024;
    await saveModelFolder(dir, model, { maxShardBytes });
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
    const files = readdirSync(dir).filter((file) => file.endsWith('.safetensors')).sort();
    expect(files.length).toBeGreaterThan(2);
    expect(files).toEqual(files.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(files.length).padStart(5, '0')}.safetensors`));
    expect(existsSync(join(dir, 'model.safetensors'))).toBe(false);
    expect(Object.keys(index.weight_map).sort()).toEqual([...model.weights.keys()].sort());
    expect(new Set(Object.values(index.weight_map))).toEqual(new Set(files));
    expect(index.metadata).toEqual({ total_size: weightBytes(model, 4) });
    // Every shard holds what the map says, within the size unless it is a single tensor.
    for (const file of files) {
      const handle = await openSafetensors(join(dir, file));
      const names = [...handle.entries.keys()];
      expect(names.sort()).toEqual(Object.keys(index.weight_map).filter((name) => index.weight_map[name] === file).sort());
      const bytes = names.reduce((sum, name) => sum + model.weights.get(name)!.data.length * 4, 0);
      expect(bytes <= maxShardBytes || names.length === 1).toBe(true);
      await handle.close();
    }
    const loaded = await loadModel(dir);
    for (const [name, tensor] of model.weights) expect(loaded.weights.get(name), name).toEqual(tensor);
  });

  it('round-trips bfloat16 and float16 shards within their precision', async () => {
    const model = createRandomModel(sharded, 9, { normNoise: 0.1 });
    for (const [dtype, encode, decode] of [
      ['bfloat16', float32ToBfloat16Bits, bfloat16BitsToFloat32],
      ['float16', float32ToFloat16Bits, float16BitsToFloat32],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'model-'));
      await saveModelFolder(dir, model, { dtype, maxShardBytes: 8 * 1024 });
      const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
      expect(index.metadata.total_size, dtype).toBe(weightBytes(model, 2));
      const loaded = await loadModel(dir);
      for (const [name, tensor] of model.weights) {
        // Exactly the nearest value of the element type (ties to even), so within half its last place.
        expect(Array.from(loaded.weights.get(name)!.data), `${dtype} ${name}`).toEqual(Array.from(tensor.data, (value) => decode(encode(value))));
      }
    }
  });

  it('replaces an earlier save whole: a single-file save over shards leaves no stale shard or index', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'model-')), 'planner');
    await saveModelFolder(dir, createRandomModel(sharded, 1), { maxShardBytes: 8 * 1024 });
    const model = createRandomModel(sharded, 2);
    await saveModelFolder(dir, model);
    expect(readdirSync(dir).filter((file) => file.includes('safetensors'))).toEqual(['model.safetensors']);
    expect((await loadModel(dir)).weights.get('model.norm.weight')).toEqual(model.weights.get('model.norm.weight'));
    expect(readdirSync(join(dir, '..'))).toEqual(['planner']);
  });

  it('leaves the previous folder intact and no partial folder when a save fails after the weights', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'model-'));
    const dir = join(parent, 'planner');
    const before = createRandomModel(sharded, 3);
    await saveModelFolder(dir, before, { maxShardBytes: 8 * 1024 });
    const listing = readdirSync(dir).sort();
    const modified = statSync(join(dir, 'model.safetensors.index.json')).mtimeMs;
    await expect(saveModelFolder(dir, createRandomModel(sharded, 4), { tokenizer: { copyFrom: join(parent, 'no-such-folder') } })).rejects.toThrow(/tokenizer\.json is missing/);
    expect(readdirSync(parent)).toEqual(['planner']);
    expect(readdirSync(dir).sort()).toEqual(listing);
    expect(statSync(join(dir, 'model.safetensors.index.json')).mtimeMs).toBe(modified);
    expect((await loadModel(dir)).weights.get('model.embed_tokens.weight')).toEqual(before.weights.get('model.embed_tokens.weight'));
  });

  it('refuses to replace a folder that holds more than a model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-'));
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    mkdirSync(join(dir, 'runs'));
    await expect(saveModelFolder(dir, createRandomModel(config, 4))).rejects.toThrow(/Cannot save a model folder over .*: it holds (notes\.txt, runs|runs, notes\.txt), which is not part of a model folder/);
    expect(readdirSync(dir).sort()).toEqual(['notes.txt', 'runs']);
  });
});
