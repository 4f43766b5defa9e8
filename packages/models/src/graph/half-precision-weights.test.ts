import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom, type PolicyTrainingBatch } from '@agentflow/core';
import { createGraphBuilder, createRuntime, float32ToFloat16Array, openSafetensors } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createCausalLm } from '../engine/causal-lm';
import { createPolicyTrainer } from '../engine/training-step';
import { createLoraAdapter, parseLoraSettings } from '../lora/lora-adapter';
import { loadPolicyModel, resolveWeightDtype } from '../policy/policy-dtype';
import { saveModelFolder } from '../weights/model-folder';
import { createRandomModel } from '../weights/random-model';
import { createWeightInitializers } from './graph-weights';
import { loraLayoutOf } from './lora-inputs';
import { nllObjective } from './policy-training-graph';

// One thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const root = mkdtempSync(join(tmpdir(), 'agentflow-half-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A small Qwen3 with an untied head, saved as a bf16 checkpoint (as Qwen3's are published).
const config = { ...getModelPreset('tiny'), vocabSize: 96, hiddenSize: 32, intermediateSize: 64, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8, tieWordEmbeddings: false };
const dir = join(root, 'bf16');
await saveModelFolder(dir, createRandomModel(config, 3, { std: 0.1, normNoise: 0.1 }), { dtype: 'bfloat16', tokenizer: null });

const lora = parseLoraSettings({ rank: 4, alpha: 8 });
const adapter = createLoraAdapter(config, lora, 1);
const random = createRandom(2);
for (const matrices of adapter.matrices.values()) for (let i = 0; i < matrices.b.length; i++) matrices.b[i] = 0.1 * random.normal();
const batch: PolicyTrainingBatch = {
  promptIds: [[1, 2, 3, 4, 5], [6, 7]],
  completionIds: [[8, 9, 10], [11, 12, 13, 14, 15, 16]],
  tokenWeights: [Array(3).fill(1 / 9), Array(6).fill(1 / 9)],
  objective: { kind: 'nll' },
};

describe('half-precision base weights', () => {
  it('keeps a bf16 folder in bf16 as the file stores it, converts it to f16 bit to bit, and keeps norms in float32', async () => {
    const file = await openSafetensors(join(dir, 'model.safetensors'));
    const stored = await file.read('model.layers.0.mlp.up_proj.weight');
    await file.close();
    const bf16 = await loadPolicyModel(dir, { dtype: 'bfloat16', device: 'cuda' });
    const up = bf16.weights.get('model.layers.0.mlp.up_proj.weight')!;
    expect(up.dtype).toBe('bfloat16');
    expect(up.data).toEqual(stored.data);
    const f16 = await loadPolicyModel(dir, { dtype: 'float16', device: 'cpu' });
    expect(f16.weights.get('model.embed_tokens.weight')!.dtype).toBe('float16');
    expect(f16.weights.get('model.norm.weight')!.dtype).toBeUndefined();
    expect(f16.weights.get('model.norm.weight')!.data).toBeInstanceOf(Float32Array);
  });

  it('on the CPU, f16 weights give log-probs within 2e-2 of float32 and LoRA gradients within 2e-2 relative', async () => {
    const f32 = await loadPolicyModel(dir, { dtype: 'float32', device: 'cpu' });
    const f16 = await loadPolicyModel(dir, { dtype: 'float16', device: 'cpu' });
    const scores = async (model: typeof f32) => {
      const lm = await createCausalLm({ model, runtime, lora });
      try {
        return (await lm.logprobs(batch, { adapter })).logprobs.flat();
      } finally {
        await lm.release();
      }
    };
    const [exact, half] = [await scores(f32), await scores(f16)];
    expect(Math.max(...exact.map((value, index) => Math.abs(value - half[index]!)))).toBeLessThan(2e-2);
    const gradients = async (model: typeof f32) => {
      const trainer = createPolicyTrainer({ model, lora: loraLayoutOf(config, lora), runtime, objectives: [nllObjective] });
      try {
        return (await trainer.run(batch, adapter)).gradients;
      } finally {
        await trainer.release();
      }
    };
    const [exactGradients, halfGradients] = [await gradients(f32), await gradients(f16)];
    for (const [name, exactGradient] of exactGradients) {
      const halfGradient = halfGradients.get(name)!;
      let difference = 0;
      let norm = 0;
      exactGradient.forEach((value, index) => {
        difference += (value - halfGradient[index]!) ** 2;
        norm += value ** 2;
      });
      expect(Math.sqrt(difference / norm), name).toBeLessThan(2e-2);
    }
  });

  it('casts a large half-precision head in blocks of rows, with the logits of one cast', async () => {
    const [rows, width] = [10, 4];
    const values = Array.from({ length: rows * width }, (_, index) => Math.sin(index));
    const weights = new Map([['head', { dtype: 'float16' as const, shape: [rows, width], data: float32ToFloat16Array(values) }]]);
    const logits = async (headCastElements: number) => {
      const graph = createGraphBuilder();
      const x = graph.input('x', 'float32', [2, width]);
      graph.output(createWeightInitializers(graph, weights, { headCastElements }).head(x, 'head'), 'logits');
      const session = await runtime.openGraph(graph);
      const result = await session.run({ x: { dtype: 'float32', shape: [2, width], data: Float32Array.from([1, 2, 3, 4, -1, 0.5, 0, 2]) } });
      await session.release();
      return { data: Array.from(result.logits!.data as Float32Array), nodes: graph.summary().nodes };
    };
    const whole = await logits(rows * width);
    const blocks = await logits(12); // blocks of 3 rows: 3, 3, 3, 1
    expect(blocks.data).toEqual(whole.data);
    expect(blocks.nodes).toBeGreaterThan(whole.nodes);
  });

  it('auto follows the device and the folder; full training and bf16 on the CPU are refused with what to use', () => {
    const choice = { requested: 'auto', device: 'cuda', storedDtype: 'bfloat16', trainable: 'lora' } as const;
    expect(resolveWeightDtype(choice)).toBe('bfloat16');
    expect(resolveWeightDtype({ ...choice, storedDtype: 'float32' })).toBe('float32');
    expect(resolveWeightDtype({ ...choice, device: 'cpu' })).toBe('float32');
    expect(resolveWeightDtype({ ...choice, trainable: 'full' })).toBe('float32');
    expect(() => resolveWeightDtype({ ...choice, requested: 'float16', trainable: 'full' })).toThrow(/full-parameter training keeps float32 master weights/);
    expect(() => resolveWeightDtype({ ...choice, requested: 'bfloat16', device: 'cpu' })).toThrow(/'bfloat16' needs CUDA.*Use float16/);
  });
});
