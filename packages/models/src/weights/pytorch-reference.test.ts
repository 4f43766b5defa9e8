import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime, readSafetensors } from '@agentflow/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import type { Qwen3Config } from '../config/qwen3-config';
import { createCausalLm } from '../engine/causal-lm';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';

// An independent reader: bench/pytorch_qwen3.py, a PyTorch Qwen3 written from the architecture,
// reads the folder by transformers' weight names. PyTorch is Debian's python3-torch under
// /usr/bin/python3 (scripts/setup.sh installs it where apt can), not a pyenv python3 on PATH.
const python = '/usr/bin/python3';
const script = fileURLToPath(new URL('../../bench/pytorch_qwen3.py', import.meta.url));
const probe = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' });
const unavailable =
  probe.error !== undefined
    ? `${python} cannot be run (${probe.error.message})`
    : probe.status !== 0
      ? `${python} has no torch (${probe.stderr.trim().split('\n').pop()}); install it with \`apt-get install -y python3-torch\``
      : undefined;
if (unavailable) console.log(`pytorch-reference: ${unavailable}; the PyTorch comparison is skipped.`);

const config: Qwen3Config = {
  ...getModelPreset('tiny'),
  vocabSize: 300,
  hiddenSize: 32,
  intermediateSize: 48,
  numHiddenLayers: 3,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 16, // != hidden / heads
  ropeTheta: 1e6,
  tieWordEmbeddings: false,
};
const batch = {
  promptIds: [[1, 5, 9, 200], [3], [7, 7, 2, 11, 4, 299]],
  completionIds: [[4, 2, 30], [12, 0, 5, 6, 39], [8]],
};

const root = mkdtempSync(join(tmpdir(), 'pytorch-reference-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(unavailable !== undefined)('a sharded folder read by PyTorch (bench/pytorch_qwen3.py)', () => {
  it('gives the log-probs the package computes from it, within 1e-4', async () => {
    const model = createRandomModel(config, 21, { std: 0.3, normNoise: 0.2 });
    await saveModelFolder(join(root, 'model'), model, { dtype: 'bfloat16', maxShardBytes: 12 * 1024, tokenizer: null });
    expect(readdirSync(join(root, 'model')).filter((file) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(file)).length).toBeGreaterThan(2);
    const tokenWeights = batch.completionIds.map((row) => row.map(() => 1));
    writeFileSync(join(root, 'batch.json'), JSON.stringify({ ...batch, tokenWeights }));

    const lm = await createCausalLm({ model: await loadModel(join(root, 'model')), runtime: createRuntime({ device: 'cpu', intraOpThreads: 1 }) });
    const { logprobs } = await lm.logprobs(batch);
    await lm.release();

    const dump = join(root, 'pytorch.safetensors');
    const run = spawnSync(python, [script, '--dir', root, '--task', 'logprobs', '--threads', '1', '--out', join(root, 'result.json'), '--dump', dump], {
      encoding: 'utf8',
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    const { shape, data } = (await readSafetensors(dump)).tensors.logprobs!;
    const theirs = { shape, data: data as Float32Array }; // [rows, longest completion], padded
    const width = theirs.shape[1]!;
    logprobs.forEach((row, index) => {
      row.forEach((value, token) => {
        expect(Math.abs(value - theirs.data[index * width + token]!), `row ${index}, token ${token}`).toBeLessThan(1e-4);
      });
    });
    expect(logprobs.flat().some((value) => value < -1)).toBe(true); // a model that is not near-uniform by accident
  });
});
