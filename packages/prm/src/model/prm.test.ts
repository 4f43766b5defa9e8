import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandomModel, getModelPreset, loraLayoutOf } from '@agentflow/models';
import { describe, expect, it } from 'vitest';
import { syntheticExamples } from '../__fixtures__/synthetic-examples';
import { constantPredictorMse, meanSquaredError } from '../metrics/regression';
import { loadPrm, savePrm } from './checkpoint';
import { buildBackboneTrainingGraph } from './backbone-training-graph';
import { createPrm } from './prm';
import { createPrmScorer } from './prm-scorer';

describe('createPrm (tiny preset, random backbone)', () => {
  it('learns a synthetic task: held-out MSE well below the constant predictor', async () => {
    const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 256 });
    const train = syntheticExamples(80, 1);
    const heldOut = syntheticExamples(30, 2);
    const started = Date.now();
    const report = await prm.train(train, { epochs: 300, patience: 30 });
    const scores = await prm.score(heldOut);
    const mse = meanSquaredError(scores, heldOut.map((example) => example.label));
    const constant = constantPredictorMse(heldOut.map((example) => example.label), report.trainingLabelMean);
    console.log(JSON.stringify({ mse, constant, bestEpoch: report.bestEpoch, epochs: report.epochs.length, ms: Date.now() - started }));
    expect(mse).toBeLessThan(0.5 * constant);
    await prm.release();
  });
});

describe('binary cross-entropy', () => {
  it('trains with loss bce and beats the constant predictor on held-out steps', async () => {
    const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 256 });
    const report = await prm.train(syntheticExamples(40, 8), { loss: 'bce', epochs: 100, patience: 20 });
    expect(report.epochs.at(-1)!.trainLoss).toBeLessThan(report.epochs[0]!.trainLoss);
    const heldOut = syntheticExamples(15, 9);
    const labels = heldOut.map((example) => example.label);
    const mse = meanSquaredError(await prm.score(heldOut), labels);
    expect(mse).toBeLessThan(0.5 * constantPredictorMse(labels, report.trainingLabelMean));
    await prm.release();
  });
});

describe('PRM checkpoints and the StepScorer', () => {
  it('a saved PRM loads back and gives identical scores; null actions score 0', async () => {
    const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, backbone: { kind: 'random', preset: 'tiny', seed: 5 } });
    await prm.train(syntheticExamples(20, 3), { epochs: 20 });
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-ckpt-')), 'prm');
    await savePrm(prm, dir);
    expect(existsSync(join(dir, 'prm-config.json')) && existsSync(join(dir, 'prm-head.safetensors'))).toBe(true);
    const inputs = [...syntheticExamples(4, 4), { question: 'q', history: [], action: null }];
    const before = await createPrmScorer(prm).score(inputs);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    const after = await createPrmScorer(loaded).score(inputs);
    expect(after).toEqual(before);
    expect(after.at(-1)).toBe(0);
    expect(after.slice(0, 4).every((score) => score > 0 && score < 1)).toBe(true);
    expect(loaded.trainingLabelMean).toBe(prm.trainingLabelMean);
    // Batching (right padding to the longest input) does not change any score.
    const alone = await Promise.all(inputs.map(async (input) => (await loaded.score([input]))[0]!));
    for (const [index, score] of alone.entries()) expect(score).toBeCloseTo(after[index]!, 5);
    await Promise.all([prm.release(), loaded.release()]);
  });
});

describe('createPrm with LoRA on the backbone', () => {
  it('trains the same with the backbone layers recomputed in the backward pass', async () => {
    const losses = async (recompute: boolean) => {
      const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 128, lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] } });
      const report = await prm.train(syntheticExamples(12, 6), { epochs: 2, patience: 2, batchSize: 6, loraLearningRate: 1e-2, recompute });
      await prm.release();
      return report.epochs.flatMap((epoch) => [epoch.trainLoss, epoch.validationLoss]);
    };
    const [kept, recomputed] = [await losses(false), await losses(true)];
    expect(recomputed).toHaveLength(4);
    recomputed.forEach((loss, index) => {
      expect(loss).toBeCloseTo(kept[index]!, 5);
    });
    expect(kept[2]).not.toBe(kept[0]); // the second epoch trained on what the first changed
    // And the recomputed graph does recompute: every layer's forward nodes appear a second time.
    const config = getModelPreset('tiny');
    const model = createRandomModel(config, 1);
    const layout = loraLayoutOf(config, { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'], useRslora: false });
    const nodes = (recompute: boolean) => buildBackboneTrainingGraph(config, model.weights, { kind: 'lora', layout }, 'mse', 0, recompute).graph.summary().nodes;
    expect(nodes(true)).toBeGreaterThan(nodes(false) + 20 * config.numHiddenLayers);
  });

  it('trains adapters and head together, lowering the loss, and the adapter survives a checkpoint', async () => {
    const prm = await createPrm({
      device: 'cpu',
      intraOpThreads: 1,
      maxTokens: 128,
      lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] },
    });
    const examples = syntheticExamples(12, 6);
    const started = Date.now();
    const report = await prm.train(examples, { epochs: 4, patience: 4, batchSize: 12, loraLearningRate: 1e-2 });
    console.log(JSON.stringify({ loraTrainLoss: report.epochs.map((epoch) => epoch.trainLoss), ms: Date.now() - started }));
    expect(report.epochs.at(-1)!.trainLoss).toBeLessThan(report.epochs[0]!.trainLoss);
    const b = prm.adapter!.matrices.values().next().value!.b;
    expect(b.some((value) => value !== 0)).toBe(true);
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-lora-')), 'prm');
    await savePrm(prm, dir);
    expect(existsSync(join(dir, 'adapter', 'adapter_model.safetensors'))).toBe(true);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    const inputs = syntheticExamples(3, 7);
    expect(await loaded.score(inputs)).toEqual(await prm.score(inputs));
    await Promise.all([prm.release(), loaded.release()]);
  });
});
