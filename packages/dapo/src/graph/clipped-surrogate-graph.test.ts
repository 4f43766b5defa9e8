import { createRandom } from '@agentflow/core';
import { type HostTensor, createGraphBuilder, createHostTensor, createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { clippedSurrogate } from '../math/clipped-surrogate';
import { addClippedSurrogate } from './clipped-surrogate-graph';

/** Builds loss + d loss / d new as an ONNX model and returns a runner over [2, 3] feeds. */
async function buildRunner(settings: { epsLow: number; epsHigh: number; klCoefficient?: number }) {
  const g = createGraphBuilder({ name: 'dapo-surrogate' });
  const newLogprobs = g.input('new_logprobs', 'float32', ['batch', 'seq']);
  const objective = addClippedSurrogate(g, newLogprobs, settings);
  const [gradient] = g.gradients(objective.loss, [newLogprobs]);
  g.output(objective.loss, 'loss');
  g.output(gradient as never, 'grad');
  g.output(objective.clippedTokens, 'clipped');
  g.output(objective.countedTokens, 'counted');
  g.output(objective.approxKlSum, 'approx_kl_sum');
  const session = await createRuntime({ device: 'cpu', intraOpThreads: 1 }).createSession(g.toBytes());
  const tensor = (values: number[][]) => createHostTensor('float32', [values.length, (values[0] as number[]).length], values.flat());
  return {
    names: objective.inputNames,
    session,
    async run(feeds: { new: number[][]; old: number[][]; advantages: number[][]; weights: number[][]; reference?: number[][] }) {
      const inputs: Record<string, HostTensor> = {
        new_logprobs: tensor(feeds.new),
        [objective.inputNames.oldLogprobs]: tensor(feeds.old),
        [objective.inputNames.advantages]: tensor(feeds.advantages),
        [objective.inputNames.tokenWeights]: tensor(feeds.weights),
      };
      if (objective.inputNames.referenceLogprobs && feeds.reference) inputs[objective.inputNames.referenceLogprobs] = tensor(feeds.reference);
      const out = await session.run(inputs);
      const scalar = (name: string) => ((out[name] as HostTensor).data as Float32Array)[0] as number;
      return {
        loss: scalar('loss'),
        gradient: Array.from((out.grad as HostTensor).data as Float32Array),
        clipped: scalar('clipped'),
        counted: scalar('counted'),
        approxKlSum: scalar('approx_kl_sum'),
      };
    },
  };
}

describe('addClippedSurrogate (ONNX graph, autodiff on ONNX Runtime)', () => {
  it('reproduces the spec worked example: loss -0.83543495 and gradient [-0.3, -0.36642083, 0, 0, 0.13498588]', async () => {
    const runner = await buildRunner({ epsLow: 0.2, epsHigh: 0.28 });
    // Row 2 has one padding token with junk log-probs (weight 0).
    const result = await runner.run({
      new: [[-1.0, -1.0, -1.5], [-1.0, -2.0, 40]],
      old: [[-1.0, -1.2, -2.0], [-0.6, -2.3, -90]],
      advantages: [[1.5, 1.5, 1.5], [-0.5, -0.5, 0]],
      weights: [[0.2, 0.2, 0.2], [0.2, 0.2, 0]],
    });
    expect(result.loss).toBeCloseTo(-0.83543495, 6);
    [-0.3, -0.36642083, 0, 0, 0.13498588, 0].forEach((value, index) => {
      expect(result.gradient[index]).toBeCloseTo(value, 6);
    });
    expect(result.clipped).toBe(2);
    expect(result.counted).toBe(5);
    await runner.session.release();
  });

  it('bounds the KL term as verl does: a token far from its reference adds 10 and no gradient', async () => {
    const settings = { epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0.5 };
    const runner = await buildRunner(settings);
    // Token 0: the policy finds it e^15 times less likely than the reference; token 1: e^25 more; token 2: close.
    const next = [[-15.1, -0.1, -0.5]];
    const old = [[-15.1, -0.1, -0.5]];
    const reference = [[-0.1, -25.1, -0.4]];
    const advantages = [[0, 0, 0]];
    const weights = [[1, 1, 1]];
    const graph = await runner.run({ new: next, old, advantages, weights, reference });
    const typed = clippedSurrogate(
      { newLogprobs: next.flat(), oldLogprobs: old.flat(), advantages: advantages.flat(), tokenWeights: weights.flat(), referenceLogprobs: reference.flat() },
      settings,
    );
    const close = Math.exp(0.1) - 0.1 - 1;
    expect(typed.referenceKl).toBeCloseTo(10 + 10 + close, 10);
    expect(graph.loss).toBeCloseTo(0.5 * (20 + close), 5);
    expect([graph.gradient[0], graph.gradient[1]]).toEqual([0, 0]);
    expect(graph.gradient[2]).toBeCloseTo(0.5 * (1 - Math.exp(0.1)), 6);
    typed.gradient.forEach((value, index) => {
      expect(graph.gradient[index]).toBeCloseTo(value, 6);
    });
    await runner.session.release();
  });

  it('matches the typed-array implementation on random batches, KL term included', async () => {
    const settings = { epsLow: 0.2, epsHigh: 0.28, klCoefficient: 0.05 };
    const runner = await buildRunner(settings);
    const random = createRandom(5);
    for (let trial = 0; trial < 20; trial++) {
      const matrix = (draw: () => number) => [0, 1].map(() => [0, 1, 2].map(draw));
      const old = matrix(() => -0.1 - 3 * random.next());
      const next = old.map((row) => row.map((value) => value + (random.next() - 0.5)));
      const advantages = matrix(() => 4 * random.next() - 2);
      const weights = matrix(() => (random.next() < 0.2 ? 0 : random.next()));
      const reference = matrix(() => -0.1 - 3 * random.next());
      const graph = await runner.run({ new: next, old, advantages, weights, reference });
      const typed = clippedSurrogate(
        { newLogprobs: next.flat(), oldLogprobs: old.flat(), advantages: advantages.flat(), tokenWeights: weights.flat(), referenceLogprobs: reference.flat() },
        settings,
      );
      expect(graph.loss).toBeCloseTo(typed.loss, 5);
      typed.gradient.forEach((value, index) => {
        expect(graph.gradient[index]).toBeCloseTo(value, 5);
      });
      expect(graph.counted).toBe(typed.tokens);
      expect(graph.clipped / Math.max(1, graph.counted)).toBeCloseTo(typed.clipFraction, 6);
      expect(graph.approxKlSum / Math.max(1, graph.counted)).toBeCloseTo(typed.approxKl, 5);
    }
    await runner.session.release();
  });
});
