import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expectedWeightShapes, getModelPreset } from '@agentflow/models';
import * as tensor from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { preflight, queryGpus } from './preflight.mjs';
import { fastRandomModel, matmulParameters } from './random-weights.mjs';

const root = resolve(import.meta.dirname, '../..');
const directory = mkdtempSync(join(tmpdir(), 'agentflow-gpu-check-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('gpu:check', () => {
  it('fills random weights by tiling one block of normal draws, norms at 1', () => {
    const config = { ...getModelPreset('tiny-qwen3-vocab'), numHiddenLayers: 1 };
    const model = fastRandomModel(config, expectedWeightShapes(config), 5);
    const embedding = model.weights.get('model.embed_tokens.weight')!.data;
    let sum = 0;
    let squares = 0;
    for (const value of embedding) {
      sum += value;
      squares += value * value;
    }
    expect(Number.isFinite(sum)).toBe(true);
    expect(Math.abs(Math.sqrt(squares / embedding.length) - config.initializerRange)).toBeLessThan(1e-3);
    expect(Math.abs(sum / embedding.length)).toBeLessThan(1e-3);
    expect([...model.weights.get('model.norm.weight')!.data].every((value) => value === 1)).toBe(true);
    // Tensors start at different places of the block.
    const q = model.weights.get('model.layers.0.self_attn.q_proj.weight')!.data;
    const k = model.weights.get('model.layers.0.self_attn.k_proj.weight')!.data;
    expect(q[0]).not.toBe(k[0]);
    // LoRA-free model FLOPs count the linear layers and the LM head, not the embedding lookup.
    const { hiddenSize: h, intermediateSize: m, headDim: d, numAttentionHeads: heads, numKeyValueHeads: kv } = config;
    expect(matmulParameters(config, model.weights)).toBe(h * d * (2 * heads + 2 * kv) + 3 * h * m + config.vocabSize * h);
    // Half precision holds the same draws rounded, matrices only, as loadModel's dtype does.
    const half = fastRandomModel(config, expectedWeightShapes(config), 5, 'bfloat16');
    const halfQ = half.weights.get('model.layers.0.self_attn.q_proj.weight')!;
    expect(halfQ).toMatchObject({ dtype: 'bfloat16' });
    expect(Array.from(halfQ.data.subarray(0, 64))).toEqual(Array.from(tensor.float32ToBfloat16Array(q.subarray(0, 64))));
    expect(half.weights.get('model.norm.weight')!.data).toBeInstanceOf(Float32Array);
    expect(() => fastRandomModel(config, expectedWeightShapes(config), 5, 'int8')).toThrow(/dtype must be float32, float16 or bfloat16, got "int8"/);
  });

  it('preflight names each missing piece', () => {
    const fake = {
      ...tensor,
      findCudaProviderLibrary: () => undefined,
      checkCudaLibraries: ({ libraries }: { libraries?: string[] }) =>
        libraries === undefined
          ? { missing: ['libcuda.so.1', 'libcublas.so.13'], elsewhere: { 'libcublas.so.13': '/opt/wheels/nvidia/cu13/lib' }, cacheRead: true }
          : { missing: libraries, elsewhere: {}, cacheRead: true },
    };
    const check = preflight(fake, { LD_LIBRARY_PATH: '/usr/local/lib' });
    if (queryGpus().problem !== undefined) expect(check.problems[0]).toMatch(/nvidia-smi|no GPU/);
    expect(check.problems).toContain('no CUDA provider installed (run `pnpm gpu:setup`)');
    expect(check.problems).toContain('missing CUDA 13 libraries: libcuda.so.1 (the NVIDIA driver)');
    expect(check.ldLibraryPath).toBe('/opt/wheels/nvidia/cu13/lib:/usr/local/lib');
    expect(check.lines).toContain('Optional: libcudnn.so.9 (cuDNN 9, loaded at run time by some kernels): not found (a warning only)');
    expect(check.problems.join(' ')).not.toContain('libcudnn');
  });

  it('exits 3 naming what is missing on a machine without a GPU, and measures on the CPU in a dry run', () => {
    const out = join(directory, 'check.json');
    if (queryGpus().problem !== undefined) {
      const run = spawnSync(process.execPath, ['scripts/gpu-check.mjs', '--out', out], { cwd: root, encoding: 'utf8' });
      expect(run.status).toBe(3);
      expect(run.stdout).toMatch(/gpu:check cannot run here: no NVIDIA driver: nvidia-smi is not on the PATH/);
      expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ ran: false, exitCode: 3 });
    }
    const dry = spawnSync(process.execPath, ['scripts/gpu-check.mjs', '--device', 'cpu', '--shapes', 'tiny', '--steps', '1', '--out', out], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/\| qwen3 LoRA gradients \(clipped surrogate\) \|.*\| ok \|/);
    expect(dry.stdout).toMatch(/\| tiny \| float32 \| [\d.]+M \| 2 x \(24\+8\) \|.*\| ok on cpu \|/);
    expect(dry.stdout).toMatch(/\| tiny \| float16 \| [\d.]+M \| 2 x \(24\+8\) \|.*\| ok on cpu \|/);
    expect(dry.stdout).toMatch(/\| float16 weights: log-probs against float32 \|.*\| ok \|/);
    expect(dry.stdout).toMatch(/\| tiny \| float16 \| 2 x \(8\+4\) \|.*\| ok on cpu \|/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report).toMatchObject({ ran: true, exitCode: 0, device: 'cpu' });
    expect(report.steps[0].tokens).toBe(64);
    expect(report.generation.map((run: { plan: { dtype: string }; tokens: number }) => [run.plan.dtype, run.tokens])).toEqual([
      ['float32', 8],
      ['float16', 8],
    ]);
  }, 120_000);
});
