import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { createRuntime, openSafetensors } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { loadQwen3Config, type Qwen3Config, toHfConfig } from '../config/qwen3-config';
import { createCausalLm } from '../engine/causal-lm';
import { checkModelWeights } from './load-weights';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';
import { expectedWeightShapes } from './weight-names';

// Hostile and careless model folders (issue 21): each is refused with an error that names the
// file and what was wrong, before tensor data is read or memory is allocated for it.

const root = mkdtempSync(join(tmpdir(), 'hostile-folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const config: Qwen3Config = { ...getModelPreset('tiny'), hiddenSize: 16, intermediateSize: 16, headDim: 8, numHiddenLayers: 1 };
let folders = 0;

async function validFolder(): Promise<string> {
  const dir = join(root, `model-${folders++}`);
  await saveModelFolder(dir, createRandomModel(config, 3), { tokenizer: null });
  return dir;
}

/** A safetensors file with the given header whose data region is `dataBytes` long: sparse, so it costs no disk. */
function writeSparseSafetensors(path: string, header: unknown, dataBytes: number): void {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  const fd = openSync(path, 'w');
  writeSync(fd, prefix);
  writeSync(fd, json);
  closeSync(fd);
  truncateSync(path, 8 + json.length + dataBytes);
}

/** A header laying out every tensor of `shapes` as F32, back to back; returns the data size too. */
function f32Header(shapes: ReadonlyMap<string, number[]>): { header: Record<string, unknown>; bytes: number } {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, shape] of shapes) {
    const bytes = shape.reduce((product, dimension) => product * dimension, 4);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  return { header, bytes: offset };
}

/** The error `load` rejects with, and how much ArrayBuffer memory the process gained meanwhile. */
async function failureOf(load: () => Promise<unknown>): Promise<{ error: AgentFlowError; grownBytes: number }> {
  const before = process.memoryUsage().arrayBuffers;
  const error = await load().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  const grownBytes = process.memoryUsage().arrayBuffers - before;
  expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
  return { error: error as AgentFlowError, grownBytes };
}

const MiB = 1024 * 1024;

describe('model folders that must not be trusted', () => {
  it('refuses a sparse file declaring a 4 GiB tensor against the config, before reading it', async () => {
    const dir = await validFolder();
    const shapes = new Map(expectedWeightShapes(config));
    shapes.set('model.embed_tokens.weight', [2 ** 30]); // 4 GiB of float32
    const { header, bytes } = f32Header(shapes);
    writeSparseSafetensors(join(dir, 'model.safetensors'), header, bytes);
    const { error, grownBytes } = await failureOf(() => loadModel(dir));
    expect(error.code).toBe('SHAPE_MISMATCH');
    expect(error.message).toMatch(/model\.embed_tokens\.weight .* has shape \[1073741824\], config\.json implies \[\d+,16\]/);
    expect(grownBytes).toBeLessThan(16 * MiB);
  });

  it('refuses weights the config implies when they exceed the memory limit, before reading them', async () => {
    const dir = join(root, 'big');
    mkdirSync(dir);
    // 1 layer, hidden 1024, vocab 262144: 1.05 GiB as float32, all in one sparse file.
    const big: Qwen3Config = { ...config, vocabSize: 262_144, hiddenSize: 1024, intermediateSize: 1024, numAttentionHeads: 8, numKeyValueHeads: 8, headDim: 128 };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(big)));
    const { header, bytes } = f32Header(expectedWeightShapes(big));
    writeSparseSafetensors(join(dir, 'model.safetensors'), header, bytes);
    const plan = await checkModelWeights(dir, loadQwen3Config(dir), { memoryLimitBytes: 2 * 2 ** 30 });
    expect(plan.float32Bytes).toBe(bytes);
    const { error, grownBytes } = await failureOf(() => loadModel(dir, { memoryLimitBytes: 2 ** 30 }));
    expect(error.message).toMatch(/are \d+ parameters, 1\.\d GiB as float32; the limit is 1\.0 GiB \(memoryLimitBytes\)/);
    expect(grownBytes).toBeLessThan(16 * MiB);
  });

  it.each([
    ['num_hidden_layers', 1e9, /num_hidden_layers: Too big: expected number to be <=1024/],
    ['hidden_size', 1e9, /hidden_size: Too big: expected number to be <=65536/],
    ['vocab_size', 2 ** 31, /vocab_size: Too big/],
  ])('refuses config.json with %s %d before anything is allocated from it', async (key, value, expected) => {
    const dir = await validFolder();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...toHfConfig(config), [key]: value }));
    const { error, grownBytes } = await failureOf(() => loadModel(dir));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(join(dir, 'config.json'));
    expect(error.message).toMatch(expected);
    expect(grownBytes).toBeLessThan(16 * MiB);
  });

  it('refuses one weight matrix past 2^32 elements although each size is in bounds', async () => {
    const dir = await validFolder();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...toHfConfig(config), vocab_size: 4_000_000, hidden_size: 8192, head_dim: 128 }));
    await expect(loadModel(dir)).rejects.toThrow(/vocab_size x hidden_size \(the embedding\) is 32768000000 elements; one weight matrix holds at most 2\^32/);
  });

  it.each([
    ['null', null, /the header is null, expected a JSON object of tensor entries/],
    ['a list', [1, 2], /the header is \[1,2\], expected a JSON object/],
    ['an entry of null', { 'model.norm.weight': null }, /tensor "model\.norm\.weight" is null, expected \{dtype, shape, data_offsets\}/],
    ['string offsets', { 'model.norm.weight': { dtype: 'F32', shape: [16], data_offsets: ['0', '64'] } }, /data_offsets \["0","64"\], expected \[begin, end\]/],
    [
      'overlapping tensors',
      { a: { dtype: 'F32', shape: [16], data_offsets: [0, 64] }, b: { dtype: 'F32', shape: [16], data_offsets: [32, 96] } },
      /tensors "a" \[0,64\) and "b" \[32,96\) overlap/,
    ],
  ])('refuses a safetensors header that is %s', async (_, header, expected) => {
    const dir = await validFolder();
    writeSparseSafetensors(join(dir, 'model.safetensors'), header, 128);
    const { error } = await failureOf(() => loadModel(dir));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toContain(join(dir, 'model.safetensors'));
    expect(error.message).toMatch(expected);
  });

  it('refuses a directory or a FIFO where model.safetensors should be, without blocking on the FIFO', async () => {
    const withDirectory = await validFolder();
    rmSync(join(withDirectory, 'model.safetensors'));
    mkdirSync(join(withDirectory, 'model.safetensors'));
    await expect(loadModel(withDirectory)).rejects.toThrow(/model\.safetensors is a directory; expected a regular file/);
    const withFifo = await validFolder();
    rmSync(join(withFifo, 'model.safetensors'));
    execFileSync('mkfifo', [join(withFifo, 'model.safetensors')]);
    await expect(loadModel(withFifo)).rejects.toThrow(/model\.safetensors is a FIFO; expected a regular file/);
    const withFifoConfig = await validFolder();
    rmSync(join(withFifoConfig, 'config.json'));
    execFileSync('mkfifo', [join(withFifoConfig, 'config.json')]);
    await expect(loadModel(withFifoConfig)).rejects.toThrow(/config\.json is a FIFO; expected a regular file/);
  });

  it('openSafetensors itself refuses a directory and a FIFO (opened without blocking)', async () => {
    const fifo = join(root, 'fifo.safetensors');
    execFileSync('mkfifo', [fifo]);
    await expect(openSafetensors(fifo)).rejects.toThrow(/fifo\.safetensors is a FIFO, not a regular file/);
    await expect(openSafetensors(root)).rejects.toThrow(/is a directory, not a regular file/);
  });

  it('refuses a shard index or a link that leads out of the folder', async () => {
    const outside = await validFolder();
    const dir = await validFolder();
    const names = [...expectedWeightShapes(config).keys()];
    const weightMap = Object.fromEntries(names.map((name) => [name, `../${outside.split('/').at(-1)}/model.safetensors`]));
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: weightMap }));
    await expect(loadModel(dir)).rejects.toThrow(/"\.\.\/model-\d+\/model\.safetensors" in model folder .* leaves the folder/);
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { [names[0]!]: join(outside, 'model.safetensors') } }));
    await expect(loadModel(dir)).rejects.toThrow(/leaves the folder/);
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: null }));
    await expect(loadModel(dir)).rejects.toThrow(/weight_map is null; expected an object of tensor name -> shard file name/);
    rmSync(join(dir, 'model.safetensors.index.json'));
    rmSync(join(dir, 'model.safetensors'));
    symlinkSync(join(outside, 'model.safetensors'), join(dir, 'model.safetensors'));
    await expect(loadModel(dir)).rejects.toThrow(/model\.safetensors resolves to .*, outside the model folder/);
    // A link inside the folder is fine.
    rmSync(join(dir, 'model.safetensors'));
    mkdirSync(join(dir, 'weights'));
    await saveModelFolder(join(dir, 'weights'), createRandomModel(config, 3), { tokenizer: null });
    symlinkSync(join(dir, 'weights', 'model.safetensors'), join(dir, 'model.safetensors'));
    expect((await loadModel(dir)).weights.size).toBe(expectedWeightShapes(config).size);
  });

  it('refuses a config.json that is not UTF-8', async () => {
    const dir = await validFolder();
    writeFileSync(join(dir, 'config.json'), Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
    await expect(loadModel(dir)).rejects.toThrow(/config\.json is not UTF-8 text/);
  });

  it('names the tensor that holds a NaN weight', async () => {
    const dir = join(root, 'nan');
    const model = createRandomModel(config, 3);
    model.weights.get('model.layers.0.mlp.up_proj.weight')!.data[5] = Number.NaN;
    await saveModelFolder(dir, model, { tokenizer: null });
    await expect(loadModel(dir)).rejects.toThrow(/Weight model\.layers\.0\.mlp\.up_proj\.weight in .* has the value NaN at index 5; every weight must be finite/);
  });

  it('reports non-finite log-probs by completion and token instead of returning them', async () => {
    const model = createRandomModel(config, 3);
    model.weights.get('model.norm.weight')!.data.fill(Number.POSITIVE_INFINITY);
    const lm = await createCausalLm({ model, runtime: createRuntime({ device: 'cpu', intraOpThreads: 1 }) });
    try {
      await expect(lm.logprobs({ promptIds: [[1, 2, 3]], completionIds: [[4, 5]] })).rejects.toThrow(
        /The log-prob of completion 0, token 0, is NaN: the model's outputs are not finite/,
      );
    } finally {
      await lm.release();
    }
  });
});
