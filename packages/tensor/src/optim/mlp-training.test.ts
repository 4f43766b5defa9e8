import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { type HostTensor, createHostTensor } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import type { SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';
import { createAdamW } from './adamw';

/** A 1-32-32-1 tanh network trained on sin(x) over [-pi, pi], entirely on ONNX Runtime. */
async function trainSine(steps: number) {
  const random = createRandom(1234);
  const g = createGraphBuilder({ name: 'sine-mlp' });
  const x = g.input('x', 'float32', ['batch', 1]);
  const target = g.input('y', 'float32', ['batch', 1]);
  const sizes = [1, 32, 32, 1];
  const parameters: Record<string, HostTensor<'float32'>> = {};
  const symbols: SymbolicTensor[] = [];
  for (let layer = 0; layer < 3; layer++) {
    const [fanIn, fanOut] = [sizes[layer]!, sizes[layer + 1]!];
    const weight = createHostTensor('float32', [fanIn, fanOut], Array.from({ length: fanIn * fanOut }, () => random.normal() / Math.sqrt(fanIn)));
    parameters[`w${layer}`] = weight;
    parameters[`b${layer}`] = createHostTensor('float32', [fanOut]);
    symbols.push(g.input(`w${layer}`, 'float32', [fanIn, fanOut]), g.input(`b${layer}`, 'float32', [fanOut]));
  }
  let hidden = x; // [batch, 1]
  for (let layer = 0; layer < 3; layer++) {
    const affine = g.add(g.matmul(hidden, symbols[2 * layer]!), symbols[2 * layer + 1]!);
    hidden = layer < 2 ? g.tanh(affine) : affine; // [batch, sizes[layer + 1]]
  }
  const error = g.sub(hidden, target);
  const loss = g.reduceMean(g.mul(error, error), [0, 1]);
  const gradients = g.gradients(loss, symbols);
  g.output(loss, 'loss');
  gradients.forEach((gradient, index) => {
    g.output(gradient, `grad.${symbols[index]!.name}`);
  });

  const session = await createRuntime({ device: 'cpu', intraOpThreads: 1 }).createSession(g.toBytes());
  const points = 64;
  const xs = Array.from({ length: points }, (_, i) => -Math.PI + (2 * Math.PI * i) / (points - 1));
  const feeds = {
    x: createHostTensor('float32', [points, 1], xs),
    y: createHostTensor('float32', [points, 1], xs.map(Math.sin)),
    ...parameters,
  };
  const optimizer = createAdamW({
    schedule: { kind: 'cosine', learningRate: 0.02, warmupSteps: 20, totalSteps: steps, minLearningRate: 0.001 },
    weightDecay: 0,
    maxGradNorm: 5,
  });
  const values = Object.fromEntries(Object.entries(parameters).map(([name, tensor]) => [name, tensor.data]));
  const losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    const out = await session.run(feeds);
    losses.push(Number(out.loss!.data[0]));
    const grads = Object.fromEntries(Object.keys(parameters).map((name) => [name, out[`grad.${name}`]!.data as Float32Array]));
    optimizer.step(values, grads);
  }
  await session.release();
  return losses;
}

describe('training a small network on ONNX Runtime', () => {
  it('learns sin(x) to low mean squared error with AdamW', async () => {
    const losses = await trainSine(600);
    expect(losses[0]).toBeGreaterThan(0.1);
    expect(losses.at(-1)).toBeLessThan(0.002);
  });

  it('repeats bit for bit with the same seed', async () => {
    const [first, second] = await Promise.all([trainSine(30), trainSine(30)]);
    expect(first).toEqual(second);
  });
});
