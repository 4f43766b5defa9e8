import { createRandom } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { createHeadParameters, createHeadSessions, type HeadLayout, type HeadParameters, headArrays, inputStatistics, resetHead } from './head-graph';
import { meanPrmLoss, type PrmLoss } from './prm-loss';
import { createHeadTrainer } from './train-head';

const inputs = 5;
const rows = 7;

function fixture(seed: number, hidden: number) {
  const random = createRandom(seed);
  const features = Float32Array.from({ length: rows * inputs }, () => random.normal());
  const labels = Float32Array.from({ length: rows }, () => random.next());
  const parameters = createHeadParameters({ inputs, hidden });
  for (const values of Object.values(headArrays(parameters))) {
    for (let index = 0; index < values.length; index++) values[index] = 0.5 * random.normal();
  }
  if (hidden > 0) {
    parameters.inputShift!.set(Array.from({ length: inputs }, () => random.normal()));
    parameters.inputScale!.set(Array.from({ length: inputs }, () => 0.5 + random.next()));
  }
  return { features, labels, parameters };
}

/** The head's scores in float64, written out: a ReLU layer when there is one, then the sigmoid. */
function referenceScores(features: Float32Array, parameters: HeadParameters, hidden: number): number[] {
  const count = features.length / inputs;
  return Array.from({ length: count }, (_, row) => {
    let input = Array.from(features.subarray(row * inputs, (row + 1) * inputs));
    if (hidden > 0) {
      const standardised = input.map((value, k) => (value - parameters.inputShift![k]!) * parameters.inputScale![k]!);
      input = Array.from({ length: hidden }, (_, unit) => {
        let sum = parameters.hiddenBias![unit]!;
        for (let k = 0; k < inputs; k++) sum += parameters.hiddenWeight![unit * inputs + k]! * standardised[k]!;
        return Math.max(sum, 0);
      });
    }
    const logit = input.reduce((sum, value, k) => sum + value * parameters.weight[k]!, parameters.bias[0]!);
    return 1 / (1 + Math.exp(-logit));
  });
}

describe('the regression head on ONNX Runtime', () => {
  for (const hidden of [0, 3]) {
    for (const loss of ['mse', 'bce'] as const) {
      it(`${hidden ? `${hidden} hidden units` : 'linear'}, ${loss}: loss matches a float64 reference and gradients match finite differences`, async () => {
        const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
        const layout: HeadLayout = { inputs, hidden };
        const head = await createHeadSessions(runtime, layout, loss);
        const { features, labels, parameters } = fixture(loss === 'mse' ? 1 : 2, hidden);
        const reference = () => meanPrmLoss(loss as PrmLoss, referenceScores(features, parameters, hidden), labels);
        const { loss: value, gradients } = await head.lossAndGradients(features, labels, parameters);
        expect(value).toBeCloseTo(reference(), 5);
        const arrays = headArrays(parameters);
        expect(Object.keys(gradients).sort()).toEqual(Object.keys(arrays).sort());
        const h = 1e-3;
        for (const [name, values] of Object.entries(arrays)) {
          for (let k = 0; k < values.length; k++) {
            const original = values[k]!;
            values[k] = original + h;
            const up = reference();
            values[k] = original - h;
            const down = reference();
            values[k] = original;
            expect(gradients[name]![k]).toBeCloseTo((up - down) / (2 * h), 3);
          }
        }
        const scores = await head.score(features, parameters);
        const expected = referenceScores(features, parameters, hidden);
        expect(Math.max(...Array.from(scores, (score, row) => Math.abs(score - expected[row]!)))).toBeLessThan(1e-5);
        await head.release();
      });
    }
  }

  it('resetHead gives the constant predictor, the hidden layer drawn from the seed and its inputs standardised', () => {
    const a = createHeadParameters({ inputs, hidden: 4 });
    const b = createHeadParameters({ inputs, hidden: 4 });
    // Three rows of five inputs; rows 0 and 2 are the training rows. Column 4 does not vary.
    const rows = Float32Array.of(1, 10, -30, 0, 7, 99, 99, 99, 99, 99, 3, 30, -10, 0, 7);
    const statistics = inputStatistics(rows, inputs, [0, 2]);
    expect(Array.from(statistics.shift)).toEqual([2, 20, -20, 0, 7]);
    expect(Array.from(statistics.scale)).toEqual([1, 0.1, 0.1, 1, 1].map(Math.fround));
    resetHead(a, 0.25, createRandom(3), statistics);
    resetHead(b, 0.25, createRandom(3), statistics);
    expect(Array.from(a.inputShift!)).toEqual([2, 20, -20, 0, 7]);
    expect(Array.from(a.weight)).toEqual([0, 0, 0, 0]);
    expect(1 / (1 + Math.exp(-a.bias[0]!))).toBeCloseTo(0.25, 6);
    expect(Array.from(a.hiddenWeight!)).toEqual(Array.from(b.hiddenWeight!));
    const bound = 1 / Math.sqrt(inputs);
    expect(Array.from(a.hiddenWeight!).every((value) => Math.abs(value) <= bound)).toBe(true);
    expect(new Set(a.hiddenWeight).size).toBe(a.hiddenWeight!.length);
    expect(() => resetHead(a, 0.5)).toThrow(/random generator and its inputs' statistics/);
  });

  it('a hidden layer fits labels no linear head can (exclusive or of two signs)', async () => {
    const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
    const random = createRandom(11);
    const count = 256;
    const features = new Float32Array(count * 2);
    const labels = new Float32Array(count);
    for (let row = 0; row < count; row++) {
      const x = random.normal();
      const y = random.normal();
      features.set([x, y], row * 2);
      labels[row] = x * y > 0 ? 0.9 : 0.1;
    }
    const all = Array.from({ length: count }, (_, index) => index);
    const fit = async (hidden: number) => {
      const layout = { inputs: 2, hidden };
      const head = await createHeadSessions(runtime, layout, 'mse');
      const parameters = createHeadParameters(layout);
      const trainer = createHeadTrainer({ head, parameters, features, labels, learningRate: 0.01, weightDecay: 0 });
      await trainer.reset(0.5, createRandom(0), all);
      for (let epoch = 0; epoch < 150; epoch++) {
        for (let start = 0; start < count; start += 32) await trainer.step(all.slice(start, start + 32));
      }
      const scores = await trainer.predict(all);
      await head.release();
      return meanPrmLoss('mse', Array.from(scores), labels);
    };
    const constant = 0.16; // every label is 0.5 ± 0.4
    const linear = await fit(0);
    const hidden = await fit(16);
    expect(linear).toBeGreaterThan(0.9 * constant);
    expect(hidden).toBeLessThan(0.25 * constant);
  });
});
