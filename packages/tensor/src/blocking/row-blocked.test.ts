import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createHostTensor, type HostTensor } from '../dtype/dtype';
import { expectClose } from '../graph/expect-close.test-helper';
import { createGraphBuilder } from '../graph/graph-builder';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';
import type { RowFunction } from './row-blocked-ops';

// rowBlocked against the same function on every row at once: values and the gradients of the
// rows and the parameters, on ONNX Runtime, with blocks that do not divide the rows.
const [width, inner] = [4, 6];

/** A gated MLP with a residual and a second output, as a decoder layer's rows see it. */
const mlp: RowFunction = (g: GraphBuilder, [x, scaleRow], [up, down, gain]) => {
  const normed = g.mul(g.mul(x!, g.reciprocal(g.sqrt(g.add(g.reduceMean(g.mul(x!, x!), [-1], true), 1e-6)))), gain!); // [b, rows, width]
  const hidden = g.matmulTransposed(normed, up!); // [b, rows, inner]
  const activated = g.mul(hidden, g.sigmoid(hidden));
  return [g.add(x!, g.mul(g.matmulTransposed(activated, down!), scaleRow!)), g.reduceSum(activated, [-1], true)]; // [b, rows, width], [b, rows, 1]
};

async function compare(sequence: number, blockSize: number) {
  const g = createGraphBuilder({ name: 'row-blocked-test' });
  const x = g.input('x', 'float32', ['batch', 'sequence', width]);
  const scaleRow = g.input('scale', 'float32', ['batch', 'sequence', 1]);
  const up = g.input('up', 'float32', [inner, width]);
  const down = g.input('down', 'float32', [width, inner]);
  const gain = g.input('gain', 'float32', [width]);
  const seeds = [g.input('seed0', 'float32', ['batch', 'sequence', width]), g.input('seed1', 'float32', ['batch', 'sequence', 1])];
  const variants: Record<string, SymbolicTensor[]> = {
    blocked: g.rowBlocked([x, scaleRow], [up, down, gain], mlp, { blockSize }),
    reference: mlp(g, [x, scaleRow], [up, down, gain]),
  };
  for (const [name, outputs] of Object.entries(variants)) {
    for (const [index, output] of outputs.entries()) g.output(output, `${name}.${index}`);
    const loss = g.add(g.reduceSum(g.mul(outputs[0]!, seeds[0]!), [0, 1, 2]), g.reduceSum(g.mul(outputs[1]!, seeds[1]!), [0, 1, 2]));
    const gradients = g.gradients(loss, [x, scaleRow, up, down, gain]);
    for (const [index, gradient] of gradients.entries()) g.output(gradient, `${name}.d${index}`);
  }
  const random = createRandom(3);
  const tensor = (shape: number[]) => createHostTensor('float32', shape, Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random.normal()));
  const feeds: Record<string, HostTensor> = {
    x: tensor([2, sequence, width]),
    scale: tensor([2, sequence, 1]),
    up: tensor([inner, width]),
    down: tensor([width, inner]),
    gain: tensor([width]),
    seed0: tensor([2, sequence, width]),
    seed1: tensor([2, sequence, 1]),
  };
  const session = await createRuntime({ device: 'cpu', intraOpThreads: 1 }).createSession(g.toBytes());
  const result = await session.run(feeds);
  await session.release();
  return result;
}

describe('rowBlocked', () => {
  it.each([
    { name: 'blocks that do not divide the rows', sequence: 7, blockSize: 3 },
    { name: 'rows fewer than one block', sequence: 2, blockSize: 5 },
  ])('matches the function on all rows at once, values and gradients: $name', async ({ sequence, blockSize }) => {
    const result = await compare(sequence, blockSize);
    for (const name of ['0', '1']) expectClose(result[`blocked.${name}`]!, result[`reference.${name}`]!, 1e-5);
    for (const index of [0, 1, 2, 3, 4]) expectClose(result[`blocked.d${index}`]!, result[`reference.d${index}`]!, 1e-4);
  });

  it('refuses a block size that is not a positive integer, naming it', () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [1, 'sequence', width]);
    expect(() => g.rowBlocked([x], [], (body, [row]) => [body.neg(row!)], { blockSize: 0 })).toThrow(/blockSize must be a positive integer.*0/);
  });
});
