import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSafetensors } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import type { DecoderConfig } from '../config/decoder-config';
import { getModelPreset } from '../config/presets';
import { completionNllGradients, scoreCompletions } from '../engine/completion-batch-scores';
import { createLoraAdapter } from '../lora/lora-adapter';
import { peftKey, saveLoraAdapter } from '../lora/peft-format';
import { perturbLoraAdapter } from '../testing/perturb-lora';
import { saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';

// The independent reader of every family: bench/pytorch_qwen3.py picks the layer from config.json's
// model_type as transformers does (Qwen2's q/k/v biases, Qwen3's q/k norm, Llama's llama3 RoPE
// scaling) and reads the weights by transformers' names. Debian's python3-torch under /usr/bin/python3.
const python = '/usr/bin/python3';
const script = fileURLToPath(new URL('../../bench/pytorch_qwen3.py', import.meta.url));
const probe = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' });
const unavailable =
  probe.error !== undefined
    ? `${python} cannot be run (${probe.error.message})`
    : probe.status !== 0
      ? `${python} has no torch (${probe.stderr.trim().split('\n').pop()}); install it with \`apt-get install -y python3-torch\``
      : undefined;
if (unavailable) console.log(`pytorch-families: ${unavailable}; the PyTorch comparison is skipped.`);

const network = { vocabSize: 300, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 8 };
// With head_dim 8 and theta 1e4 the wavelengths are 6.3, 63, 628 and 6283 positions: against an
// original context of 200 one pair is kept, one blended and two divided by 8, so every branch of
// llama3's scaling shows in the log-probs of these short rows.
const llama3 = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 200 } as const;

const families: { label: string; config: DecoderConfig }[] = [
  { label: 'Qwen2 (q/k/v biases, no q/k norm, untied)', config: { ...getModelPreset('tiny-qwen2'), ...network, tieWordEmbeddings: false } },
  { label: 'Qwen3 (q/k norm, head_dim != hidden / heads, tied)', config: { ...getModelPreset('tiny'), ...network, headDim: 16 } },
  { label: 'Llama 3.1 (llama3 RoPE scaling, untied)', config: { ...getModelPreset('tiny-llama'), ...network, ropeTheta: 1e4, ropeScaling: llama3 } },
  {
    label: 'Llama with attention_bias and mlp_bias, linear RoPE scaling, tied',
    config: { ...getModelPreset('tiny-llama'), ...network, tieWordEmbeddings: true, attentionBias: true, mlpBias: true, ropeScaling: { type: 'linear', factor: 4 } },
  },
];

const batch = {
  promptIds: [[1, 5, 9, 200], [3], [7, 7, 2, 11, 4, 299]],
  completionIds: [[4, 2, 30], [12, 0, 5, 6, 39], [8]],
};
const tokens = batch.completionIds.flat().length;

const root = mkdtempSync(join(tmpdir(), 'pytorch-families-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(unavailable !== undefined).each(families)('$label read by PyTorch (bench/pytorch_qwen3.py)', ({ config }) => {
  it('gives the same log-probs (1e-5) and LoRA gradients (1e-4 + 1e-3 relative) as the package', async () => {
    const dir = join(root, config.architecture + String(families.findIndex((family) => family.config === config)));
    mkdirSync(dir);
    const model = createRandomModel(config, 21, { std: 0.3, normNoise: 0.2, biasStd: 0.3 });
    await saveModelFolder(join(dir, 'model'), model, { tokenizer: null });
    const adapter = perturbLoraAdapter(createLoraAdapter(config, { rank: 4, alpha: 8 }, 5), { seed: 9, scale: 0.4 });
    await saveLoraAdapter(join(dir, 'adapter'), adapter);
    writeFileSync(join(dir, 'batch.json'), JSON.stringify({ ...batch, tokenWeights: batch.completionIds.map((row) => row.map(() => 1 / tokens)) }));

    const modelDir = join(dir, 'model');
    const adapterDir = join(dir, 'adapter');
    const { logprobs } = await scoreCompletions({ modelDir, adapterDir, batch, device: 'cpu' });
    const { loss, gradients } = await completionNllGradients({ modelDir, adapterDir, batch, device: 'cpu' });

    const dump = join(dir, 'pytorch.safetensors');
    const run = spawnSync(python, [script, '--dir', dir, '--task', 'lora', '--threads', '1', '--out', join(dir, 'result.json'), '--dump', dump], {
      encoding: 'utf8',
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    const theirs = (await readSafetensors(dump)).tensors;
    const theirLogprobs = theirs.logprobs!; // [rows, longest completion], padded
    const width = theirLogprobs.shape[1]!;
    logprobs.forEach((row, index) => {
      row.forEach((value, token) => {
        expect(Math.abs(value - (theirLogprobs.data as Float32Array)[index * width + token]!), `row ${index}, token ${token}`).toBeLessThan(1e-5);
      });
    });
    expect(Math.abs(loss - (theirs.loss!.data as Float32Array)[0]!)).toBeLessThan(1e-5);
    expect(logprobs.flat().some((value) => value < -1)).toBe(true); // not near-uniform by accident

    let compared = 0;
    let norm = 0;
    for (const [path] of adapter.matrices) {
      for (const matrix of ['A', 'B'] as const) {
        const ours = gradients.get(peftKey(path, matrix))!;
        const their = theirs[`grad.lora.${path}.${matrix}`]!.data as Float32Array;
        expect(ours.length).toBe(their.length);
        ours.forEach((value, index) => {
          expect(Math.abs(value - their[index]!), `${peftKey(path, matrix)}[${index}]: ${value} vs ${their[index]}`).toBeLessThan(1e-4 + 1e-3 * Math.abs(their[index]!));
          norm += their[index]! ** 2;
        });
        compared++;
      }
    }
    expect(compared).toBe(2 * 7 * config.numHiddenLayers); // A and B of every linear module of every layer
    expect(Math.sqrt(norm)).toBeGreaterThan(1e-2); // gradients large enough for the tolerance to mean something
    const written = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'));
    expect(written.model_type).toBe(config.architecture);
  });
});

describe.skipIf(unavailable !== undefined)('what the PyTorch comparison would catch', () => {
  it("a Llama folder scored without its llama3 RoPE scaling gives other log-probs", async () => {
    const [family] = families.filter((entry) => entry.config.ropeScaling.type === 'llama3');
    const model = createRandomModel(family!.config, 21, { std: 0.3, normNoise: 0.2 });
    const scaled = join(root, 'scaled');
    const unscaled = join(root, 'unscaled');
    await saveModelFolder(scaled, model, { tokenizer: null });
    await saveModelFolder(unscaled, { ...model, config: { ...model.config, ropeScaling: { type: 'default' } } }, { tokenizer: null });
    const a = (await scoreCompletions({ modelDir: scaled, batch, device: 'cpu' })).logprobs.flat();
    const b = (await scoreCompletions({ modelDir: unscaled, batch, device: 'cpu' })).logprobs.flat();
    expect(Math.max(...a.map((value, index) => Math.abs(value - b[index]!)))).toBeGreaterThan(1e-3);
  });
});
