import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from '@agentflow/core';
import { writeRandomModelFolder } from '@agentflow/models';
import { afterAll, describe, expect, it } from 'vitest';
import type { PrmExample } from '../example/prm-example';
import { constantPredictorMse } from '../metrics/regression';
import { loadPrm, PRM_CONFIG_FILE, savePrm } from './checkpoint';
import { createPrm } from './prm';

const fixtures = fileURLToPath(new URL('../__fixtures__/', import.meta.url));
/** Lets the child process run TypeScript sources (one set of hooks for every package's tests). */
const registerTypescript = fileURLToPath(new URL('../../../../tools/typescript-hooks/register-typescript.mjs', import.meta.url));
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
const newFolder = (prefix: string) => {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  folders.push(folder);
  return folder;
};
// Short inputs (the last 32 byte-level tokens: the decision's end) keep a full training step cheap.
const base = { device: 'cpu' as const, intraOpThreads: 1, maxTokens: 32 };

/** One-step trajectories with distinct short decisions and labels 0 or 1 drawn at random: only memorising them fits them. */
function randomLabelExamples(count: number, seed: number): PrmExample[] {
  const random = createRandom(seed);
  return Array.from({ length: count }, (_, t) => ({
    id: `r${seed}-t${t}:0`,
    trajectoryId: `r${seed}-t${t}`,
    stepIndex: 0,
    question: 'q',
    history: [],
    action: { thought: `n${random.int(100, 999)}`, action: 'search', action_input: `${random.int(1000, 9999)}` },
    label: random.next() < 0.5 ? 0 : 1,
    provenance: { labeller: 'judge', judgeModel: 'synthetic' },
  }));
}

/** Scores of `inputs` from a PRM checkpoint, computed by a fresh Node process (its own import of the package). */
function scoresInFreshProcess(dir: string, inputs: readonly PrmExample[]): number[] {
  const child = spawnSync(process.execPath, ['--import', registerTypescript, join(fixtures, 'score-prm-checkpoint.ts'), dir, JSON.stringify(inputs)], {
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`the fresh process failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as number[];
}

describe('a PRM whose backbone trains in full', () => {
  // 160 steps with random labels: more than the head's 65 parameters can fit.
  const examples = randomLabelExamples(160, 1);
  const labels = examples.map((example) => example.label);

  it('fits labels the head alone cannot, even with 20x the epochs; a fresh process loads it back with the same scores', async () => {
    const headOnly = await createPrm(base);
    const headReport = await headOnly.train(examples, { epochs: 300, patience: 300, validationFraction: 0, learningRate: 3e-2 });
    const headLoss = Math.min(...headReport.epochs.map((epoch) => epoch.validationLoss));
    await headOnly.release();

    const prm = await createPrm({ ...base, trainable: { kind: 'full' } });
    expect(prm.trainedWeights).toEqual([...prm.model.weights.keys()]); // the tiny preset's head is tied: every weight is read
    const embedding = prm.model.weights.get('model.embed_tokens.weight')!.data.slice();
    const started = Date.now();
    const report = await prm.train(examples, { epochs: 15, patience: 15, validationFraction: 0, batchSize: 16, backboneLearningRate: 1e-3 });
    const losses = report.epochs.map((epoch) => epoch.validationLoss);
    const fullLoss = Math.min(...losses);
    const constant = constantPredictorMse(labels, report.trainingLabelMean);
    console.log(JSON.stringify({ constant, headLoss, fullLoss, fullLosses: losses.map((loss) => Number(loss.toFixed(4))), fullMs: Date.now() - started }));
    expect(headLoss).toBeGreaterThan(0.6 * constant);
    expect(fullLoss).toBeLessThan(0.5 * headLoss);
    // The backbone trained in place: the weights the sessions read changed.
    expect(prm.model.weights.get('model.embed_tokens.weight')!.data).not.toEqual(embedding);

    const dir = join(newFolder('prm-full-'), 'prm');
    await savePrm(prm, dir);
    for (const file of ['config.json', 'model.safetensors', 'tokenizer.json']) expect(existsSync(join(dir, 'backbone', file)), file).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, PRM_CONFIG_FILE), 'utf8')).settings.trainable).toEqual({ kind: 'full', frozen: [] });
    const inputs = examples.slice(0, 6);
    const scores = await prm.score(inputs);
    const fresh = scoresInFreshProcess(dir, inputs);
    expect(fresh).toHaveLength(inputs.length);
    fresh.forEach((score, index) => {
      expect(Math.abs(score - scores[index]!)).toBeLessThan(1e-6);
    });
    // The random preset is rebuilt from its seed, then the saved weights replace it: not the seed's scores.
    const untrained = await createPrm({ ...base, trainable: { kind: 'full' } });
    expect(await untrained.score(inputs)).not.toEqual(scores);
    // Saving again over the same checkpoint replaces the backbone folder.
    await savePrm(prm, dir);
    const loaded = await loadPrm(dir, { device: 'cpu', intraOpThreads: 1 });
    expect(await loaded.score(inputs)).toEqual(scores);
    await Promise.all([prm.release(), untrained.release(), loaded.release()]);
  });

  it('keeps frozen weights as they are, and names a pattern that matches no weight', async () => {
    const prm = await createPrm({ ...base, trainable: { kind: 'full', frozen: ['model.embed_tokens.weight', 'model.layers.*.input_layernorm.weight'] } });
    expect(prm.trainedWeights).not.toContain('model.embed_tokens.weight');
    expect(prm.trainedWeights).not.toContain('model.layers.1.input_layernorm.weight');
    expect(prm.trainedWeights).toContain('model.layers.1.self_attn.q_proj.weight');
    const before = new Map([...prm.model.weights].map(([name, tensor]) => [name, tensor.data.slice()]));
    await prm.train(examples.slice(0, 32), { epochs: 1, validationFraction: 0, batchSize: 16, backboneLearningRate: 1e-3 });
    for (const [name, values] of before) {
      const trained = prm.trainedWeights.includes(name);
      expect(prm.model.weights.get(name)!.data.some((value, index) => value !== values[index]), name).toBe(trained);
    }
    await prm.release();
    await expect(createPrm({ ...base, trainable: { kind: 'full', frozen: ['model.layers.*.mlp.gate.weight'] } })).rejects.toThrow(
      /frozen pattern "model\.layers\.\*\.mlp\.gate\.weight" matches no weight/,
    );
  });
});

describe('a folder backbone trained in full', () => {
  it('is saved with its tokenizer, so the checkpoint loads with the same scores after the original folder is gone', async () => {
    const original = join(newFolder('prm-full-folder-'), 'backbone');
    await writeRandomModelFolder({ preset: 'tiny', outDir: original, seed: 4 });
    const prm = await createPrm({ ...base, backbone: { kind: 'folder', path: original }, trainable: { kind: 'full', frozen: ['model.layers.0.*'] } });
    const examples = randomLabelExamples(32, 2);
    await prm.train(examples, { epochs: 2, validationFraction: 0, batchSize: 16, backboneLearningRate: 1e-3 });
    const inputs = examples.slice(0, 4);
    const scores = await prm.score(inputs);
    const dir = join(newFolder('prm-full-folder-'), 'prm');
    await savePrm(prm, dir);
    await prm.release();
    rmSync(original, { recursive: true });
    const loaded = await loadPrm(dir, { device: 'cpu', intraOpThreads: 1 });
    expect(loaded.config.trainable).toEqual({ kind: 'full', frozen: ['model.layers.0.*'] });
    expect(loaded.trainedWeights).not.toContain('model.layers.0.mlp.up_proj.weight');
    expect(await loaded.score(inputs)).toEqual(scores);
    await loaded.release();
    // A checkpoint whose backbone folder is missing says so rather than scoring with the untrained backbone.
    rmSync(join(dir, 'backbone'), { recursive: true });
    await expect(loadPrm(dir, { device: 'cpu' })).rejects.toThrow(/backbone trained in full, but .*backbone holds no model folder/);
  });
});

describe('what trains with the head: trainable, and lora as its earlier spelling', () => {
  it('reads lora as trainable lora, refuses both at once, and loads a checkpoint written before trainable existed', async () => {
    await expect(createPrm({ ...base, lora: { rank: 2, alpha: 4 }, trainable: { kind: 'full' } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/lora: lora is the earlier spelling of trainable: \{ kind: 'lora', \.\.\. \}, but trainable is also given \(kind full\)/),
    });
    const lora = await createPrm({ ...base, lora: { rank: 2, alpha: 4, targetModules: ['q_proj'] } });
    expect(lora.config.trainable).toEqual({ kind: 'lora', rank: 2, alpha: 4, targetModules: ['q_proj'], useRslora: false });
    expect(lora.adapter?.config.rank).toBe(2);
    await lora.release();

    const head = await createPrm(base);
    expect(head.config.trainable).toEqual({ kind: 'head' });
    const dir = join(newFolder('prm-head-'), 'prm');
    await savePrm(head, dir);
    const file = join(dir, PRM_CONFIG_FILE);
    const checkpoint = JSON.parse(readFileSync(file, 'utf8'));
    const { trainable: _trainable, ...earlier } = checkpoint.settings;
    writeFileSync(file, JSON.stringify({ ...checkpoint, settings: earlier }));
    const loaded = await loadPrm(dir, { device: 'cpu' });
    expect(loaded.config.trainable).toEqual({ kind: 'head' });
    await Promise.all([head.release(), loaded.release()]);
  });
});
