import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import type { PrmExample } from '../example/prm-example';
import { constantPredictorMse, meanSquaredError } from '../metrics/regression';
import { loadPrm, PRM_CONFIG_FILE, savePrm } from './checkpoint';
import { confidenceFeatureCount, confidenceFeatures } from './confidence-features';
import { createPrm } from './prm';
import type { PrmSettings } from './prm-settings';

/**
 * Trajectories of three steps whose text says nothing about the label: every decision is the
 * same search. Each token was sampled with p 0.9, except that with chance 0.4 one decision
 * was drawn against the planner's judgement (one token at p 0.05), and from that decision on
 * the trajectory fails (label 0); before it, and in trajectories without one, steps are right (1).
 */
function confidenceExamples(count: number, seed: number): PrmExample[] {
  const random = createRandom(seed);
  const examples: PrmExample[] = [];
  for (let t = 0; t < count; t++) {
    const slip = random.next() < 0.4 ? random.int(0, 2) : -1;
    const history: PrmExample['history'] = [];
    const historyLogprobs: number[][] = [];
    for (let stepIndex = 0; stepIndex < 3; stepIndex++) {
      const action = { thought: 'look it up', action: 'search', action_input: 'Riri cats' };
      const completionLogprobs = [Math.log(0.9), stepIndex === slip ? Math.log(0.05) : Math.log(0.9), Math.log(0.9)];
      examples.push({
        id: `c${seed}-t${t}:${stepIndex}`,
        trajectoryId: `c${seed}-t${t}`,
        stepIndex,
        question: 'How many cats does Riri have?',
        history: [...history],
        action,
        completionLogprobs,
        historyLogprobs: [...historyLogprobs],
        label: slip >= 0 && stepIndex >= slip ? 0 : 1,
        provenance: { labeller: 'monte-carlo', samples: 4, successes: 0 },
      });
      history.push(action);
      historyLogprobs.push(completionLogprobs);
    }
  }
  return examples;
}

/**
 * As on the world's Monte-Carlo labels: a trajectory whose tokens all had p >= 0.7 succeeds three
 * times in four; one with any token below it, wherever below (log-probs -1.5 to -9), one time in
 * seven. The labels are those chances, so the best predictor's MSE is 0. Ids start with `prefix`.
 */
function chanceStepsBelowTokenProbability(count: number, seed: number, prefix: string): PrmExample[] {
  const random = createRandom(seed);
  return Array.from({ length: count }, (_, index) => {
    const doubted = random.next() < 0.5;
    const lowest = doubted ? -1.5 - 7.5 * random.next() : Math.log(0.7 + 0.3 * random.next());
    return {
      id: `${prefix}${seed}-${index}:0`,
      trajectoryId: `${prefix}${seed}-${index}`,
      stepIndex: 0,
      question: 'How many cats does Riri have?',
      history: [],
      action: { thought: 'look it up', action: 'search', action_input: 'Riri cats' },
      completionLogprobs: [Math.log(0.95), lowest],
      historyLogprobs: [],
      label: doubted ? 1 / 7 : 0.75,
      provenance: { labeller: 'monte-carlo', samples: 4, successes: 0 },
    };
  });
}

describe('confidenceFeatures', () => {
  it("gives the decision's log-likelihood, its least likely token, and the least likely token so far", () => {
    const [example] = confidenceExamples(1, 1).slice(2);
    const features = confidenceFeatures({ ...example!, completionLogprobs: [-0.1, -0.5], historyLogprobs: [[-0.2], [-2, -0.01]] });
    expect(features[0]).toBeCloseTo(-0.6, 10);
    expect(features[1]).toBe(-0.5);
    expect(features[2]).toBe(-2);
    // A token the sampler could not have drawn stays finite; a positive log-prob is refused by value.
    expect(confidenceFeatures({ ...example!, completionLogprobs: [Number.NEGATIVE_INFINITY], historyLogprobs: [[0], [0]] })[2]).toBe(-30);
    expect(() => confidenceFeatures({ ...example!, completionLogprobs: [0.5], historyLogprobs: [[0], [0]] })).toThrow(/is 0.5; log-probs are numbers <= 0/);
  });

  it("with 'extended', also gives them as probabilities, the product of each decision's least likely token, and the decisions before", () => {
    const [example] = confidenceExamples(1, 1).slice(2);
    const features = confidenceFeatures({ ...example!, completionLogprobs: [-0.1, -0.5], historyLogprobs: [[-0.2], [-2, -0.01]] }, 'extended');
    expect(features).toHaveLength(8);
    expect(features.slice(0, 3)).toEqual(confidenceFeatures({ ...example!, completionLogprobs: [-0.1, -0.5], historyLogprobs: [[-0.2], [-2, -0.01]] }));
    expect(features[3]).toBeCloseTo(Math.exp(-0.6), 12);
    expect(features[4]).toBeCloseTo(Math.exp(-0.5), 12);
    expect(features[5]).toBeCloseTo(Math.exp(-2), 12);
    // The least likely tokens of the three decisions: -0.2, -2 and this one's -0.5.
    expect(features[6]).toBeCloseTo(Math.exp(-2.7), 12);
    expect(features[7]).toBe(2);
    expect(confidenceFeatureCount('extended')).toBe(8);
    expect(confidenceFeatureCount(true)).toBe(3);
    expect(confidenceFeatureCount(false)).toBe(0);
  });

  it('names the step whose log-probs were not recorded', () => {
    const [example] = confidenceExamples(1, 1).slice(1);
    const { historyLogprobs: _history, ...withoutHistory } = example!;
    expect(() => confidenceFeatures(withoutHistory)).toThrow(/step c1-t0:1 has no historyLogprobs/);
    expect(() => confidenceFeatures({ ...example!, historyLogprobs: [] })).toThrow(/0 historyLogprobs for 1 history decisions/);
  });
});

describe('a PRM with confidence features', () => {
  const train = confidenceExamples(60, 2);
  const heldOut = confidenceExamples(30, 3);
  const labels = heldOut.map((example) => example.label);

  it('learns what only the confidence shows, where the same PRM without it stays at the constant', async () => {
    const withConfidence = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 128, confidence: true });
    const report = await withConfidence.train(train, { epochs: 150, patience: 30 });
    const mse = meanSquaredError(await withConfidence.score(heldOut), labels);
    const constant = constantPredictorMse(labels, report.trainingLabelMean);
    const textOnly = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 128 });
    const textReport = await textOnly.train(train, { epochs: 150, patience: 30 });
    const textMse = meanSquaredError(await textOnly.score(heldOut), labels);
    console.log(JSON.stringify({ mse, textMse, constant, textConstant: constantPredictorMse(labels, textReport.trainingLabelMean) }));
    expect(mse).toBeLessThan(0.3 * constant);
    expect(textMse).toBeGreaterThan(0.8 * constant);

    // The head is [hidden, 3] wide in the checkpoint, and the features come back with it.
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-confidence-')), 'prm');
    await savePrm(withConfidence, dir);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    expect(loaded.config.confidence).toBe(true);
    expect(loaded.head.weight.length).toBe(withConfidence.model.config.hiddenSize + 3);
    expect(await loaded.score(heldOut)).toEqual(await withConfidence.score(heldOut));
    const { completionLogprobs: _logprobs, ...unrecorded } = heldOut[0]!;
    await expect(loaded.score([unrecorded])).rejects.toThrow(/no completionLogprobs/);
    await Promise.all([withConfidence.release(), textOnly.release(), loaded.release()]);
  });

  it("with 'extended', learns a success chance that falls in a step below a token probability, where a head linear in the log-probs cannot", async () => {
    const steps = (count: number, seed: number) => chanceStepsBelowTokenProbability(count, seed, 's');
    const train = steps(160, 4);
    const heldOut = steps(80, 5);
    const labels = heldOut.map((example) => example.label);
    const mseWith = async (confidence: 'log-probs' | 'extended') => {
      const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 128, confidence });
      await prm.train(train, { epochs: 150, patience: 30 });
      const mse = meanSquaredError(await prm.score(heldOut), labels);
      if (confidence === 'extended') {
        const dir = join(mkdtempSync(join(tmpdir(), 'prm-confidence-')), 'prm');
        await savePrm(prm, dir);
        const loaded = await loadPrm(dir, { device: 'cpu' });
        expect(loaded.config.confidence).toBe('extended');
        expect(loaded.head.weight.length).toBe(prm.model.config.hiddenSize + 8);
        expect(await loaded.score(heldOut)).toEqual(await prm.score(heldOut));
        await loaded.release();
      }
      await prm.release();
      return mse;
    };
    const constant = constantPredictorMse(labels, train.reduce((sum, example) => sum + example.label, 0) / train.length);
    const logProbs = await mseWith('log-probs');
    const extended = await mseWith('extended');
    console.log(JSON.stringify({ constant, logProbs, extended }));
    expect(extended).toBeLessThan(0.1 * constant);
    expect(extended).toBeLessThan(0.5 * logProbs);
  });

  it('a head with a hidden layer learns that step from the log-probs alone; its checkpoint scores the same in another PRM, and one whose config names another width is refused', async () => {
    const [trainSet, heldOutSet] = [chanceStepsBelowTokenProbability(160, 6, 'h'), chanceStepsBelowTokenProbability(80, 7, 'h')];
    const heldOutLabels = heldOutSet.map((example) => example.label);
    const fit = async (headHidden: number) => {
      const prm = await createPrm({ device: 'cpu', intraOpThreads: 1, maxTokens: 128, confidence: 'log-probs', headHidden });
      await prm.train(trainSet, { epochs: 150, patience: 30 });
      return { prm, mse: meanSquaredError(await prm.score(heldOutSet), heldOutLabels) };
    };
    const constant = constantPredictorMse(heldOutLabels, trainSet.reduce((sum, example) => sum + example.label, 0) / trainSet.length);
    const linear = await fit(0);
    const hidden = await fit(16);
    console.log(JSON.stringify({ constant, linear: linear.mse, hidden: hidden.mse }));
    expect(hidden.mse).toBeLessThan(0.1 * constant);
    expect(hidden.mse).toBeLessThan(0.5 * linear.mse);
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-hidden-')), 'prm');
    await savePrm(hidden.prm, dir);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    expect(loaded.config.headHidden).toBe(16);
    expect(Array.from(loaded.head.inputScale!)).toEqual(Array.from(hidden.prm.head.inputScale!));
    expect(await loaded.score(heldOutSet)).toEqual(await hidden.prm.score(heldOutSet));
    // A config that names another width than the head file holds is refused with both.
    const configPath = join(dir, PRM_CONFIG_FILE);
    const saved = JSON.parse(readFileSync(configPath, 'utf8'));
    writeFileSync(configPath, JSON.stringify({ ...saved, settings: { ...saved.settings, headHidden: 8 } }));
    await expect(loadPrm(dir, { device: 'cpu' })).rejects.toThrow(/must hold .*score\.hidden\.weight \[8, \d+\].*settings\.headHidden 8\); it holds .*score\.hidden\.weight \[16, \d+\]/);
    await Promise.all([linear.prm.release(), hidden.prm.release(), loaded.release()]);
  });

  // A PRM with LoRA on the backbone and the three log-prob features, and how it trains.
  const withLora: PrmSettings = { device: 'cpu', intraOpThreads: 1, maxTokens: 128, confidence: true, lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] } };
  const loraTraining = { epochs: 12, patience: 12, batchSize: 30, learningRate: 0.05 };

  it('trains them with LoRA on the backbone too', async () => {
    const prm = await createPrm(withLora);
    const report = await prm.train(train, loraTraining);
    const mse = meanSquaredError(await prm.score(heldOut), labels);
    console.log(JSON.stringify({ loraMse: mse, losses: report.epochs.map((epoch) => epoch.trainLoss.toFixed(3)) }));
    expect(mse).toBeLessThan(0.5 * constantPredictorMse(labels, report.trainingLabelMean));
    await prm.release();
  });

  it('trains a head with a hidden layer with LoRA on the backbone', async () => {
    const prm = await createPrm({ ...withLora, headHidden: 8 });
    const report = await prm.train(train, loraTraining);
    const mse = meanSquaredError(await prm.score(heldOut), labels);
    console.log(JSON.stringify({ loraHiddenMse: mse }));
    expect(mse).toBeLessThan(0.5 * constantPredictorMse(labels, report.trainingLabelMean));
    // The standardisation came from the training rows' features: the log-likelihood column is not the identity.
    expect(Array.from(prm.head.inputShift!).some((value) => value !== 0)).toBe(true);
    await prm.release();
  });
});
