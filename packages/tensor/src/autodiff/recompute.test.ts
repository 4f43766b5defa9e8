import { createRandom } from '@agentflow/core';
import onnxProto from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { createHostTensor } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { createRuntime } from '../runtime/runtime';

const width = 6;
const layers = 3;
const rows = 4;

/** A residual stack: each layer h + W2 silu(norm(h) W1 + lora) with a softmax-weighted mix. */
function residualStack(g: GraphBuilder, recompute: boolean) {
  const random = createRandom(5);
  const matrix = (r: number, c: number) =>
    g.constant(createHostTensor('float32', [r, c], Array.from({ length: r * c }, () => random.normal() * 0.5)));
  const x = g.input('x', 'float32', [rows, width]);
  const lora = g.input('lora', 'float32', [width, width]);
  const boundaries: SymbolicTensor[] = [];
  let h = g.mul(x, 1.5);
  boundaries.push(h);
  for (let layer = 0; layer < layers; layer++) {
    const normed = g.mul(h, g.reciprocal(g.sqrt(g.add(g.reduceMean(g.mul(h, h), [-1], true), 1e-6))));
    const gate = g.add(g.matmulTransposed(normed, matrix(width, width)), g.matmul(normed, lora));
    const activated = g.mul(gate, g.sigmoid(gate));
    const mixed = g.mul(g.softmax(activated, -1), g.tanh(activated));
    h = g.add(h, g.matmul(mixed, matrix(width, width)));
    boundaries.push(h);
  }
  const loss = g.reduceSum(g.mul(g.logSoftmax(h, -1), g.sin(h)), [0, 1]);
  g.output(loss, 'loss');
  const [gx, gl] = g.gradients(loss, [x, lora], recompute ? { recompute: boundaries } : {});
  g.output(gx!, 'grad.x');
  g.output(gl!, 'grad.lora');
  return g;
}

describe('gradients with recompute', () => {
  it('gives the same gradients as keeping the activations, recomputing every segment once', async () => {
    const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
    const random = createRandom(11);
    const feeds = {
      x: createHostTensor('float32', [rows, width], Array.from({ length: rows * width }, () => random.normal())),
      lora: createHostTensor('float32', [width, width], Array.from({ length: width * width }, () => random.normal() * 0.1)),
    };
    const plain = residualStack(createGraphBuilder({ name: 'plain' }), false);
    const recomputed = residualStack(createGraphBuilder({ name: 'recomputed' }), true);
    // Each of the three segments' forward nodes is emitted once more (plus the delay nodes).
    expect(recomputed.summary().nodes).toBeGreaterThan(plain.summary().nodes + layers * 10);
    const [a, b] = await Promise.all([
      runtime.openGraph(plain).then((session) => session.run(feeds)),
      runtime.openGraph(recomputed).then((session) => session.run(feeds)),
    ]);
    for (const name of ['loss', 'grad.x', 'grad.lora']) {
      const left = Array.from(a[name]!.data as Float32Array);
      const right = Array.from(b[name]!.data as Float32Array);
      expect(right.length).toBe(left.length);
      right.forEach((value, index) => {
        expect(value).toBeCloseTo(left[index]!, 5);
      });
    }
    expect(Math.max(...Array.from(a['grad.lora']!.data as Float32Array).map(Math.abs))).toBeGreaterThan(1e-3);
  });

  it('makes each segment wait for the parameter gradients of the segment after it', () => {
    // One LoRA-like parameter per layer. ONNX Runtime runs nodes in a depth-first order from the
    // graph's leaves, so a parameter gradient that nothing downstream waits for runs last and keeps
    // its segment's recomputed inputs alive to the end: segment k's recomputation must depend on
    // the gradient of segment k+1's parameter.
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [rows, width]);
    const loras = Array.from({ length: layers }, (_, layer) => g.input(`lora${layer}`, 'float32', [width, width]));
    const boundaries: SymbolicTensor[] = [g.mul(x, 1.5)];
    let h = boundaries[0]!;
    for (const lora of loras) {
      h = g.add(h, g.tanh(g.matmul(h, lora)));
      boundaries.push(h);
    }
    const loss = g.reduceSum(g.mul(h, h), [0, 1]);
    g.gradients(loss, loras, { recompute: boundaries }).forEach((gradient, layer) => {
      g.output(gradient, `grad.lora${layer}`);
    });
    const nodes = onnxProto.onnx.ModelProto.decode(g.toBytes()).graph?.node ?? [];
    const producer = new Map(nodes.flatMap((node) => (node.output ?? []).map((name) => [name, node] as const)));
    const ancestors = (name: string) => {
      const seen = new Set<string>();
      const stack = [name];
      while (stack.length > 0) {
        const node = producer.get(stack.pop()!);
        for (const input of node?.input ?? []) {
          if (!seen.has(input)) {
            seen.add(input);
            stack.push(input);
          }
        }
      }
      return seen;
    };
    // The output names are Identity nodes over the gradient tensors.
    const gradient = (layer: number) => producer.get(`grad.lora${layer}`)!.input![0]!;
    for (let layer = 0; layer + 1 < layers; layer++) {
      expect(ancestors(gradient(layer)).has(gradient(layer + 1))).toBe(true);
    }
  });

  it('refuses boundaries that are graph inputs or out of forward order', () => {
    const g = createGraphBuilder();
    const x = g.input('x', 'float32', [2]);
    const y = g.exp(x);
    const z = g.sin(y);
    const loss = g.reduceSum(z, [0]);
    expect(() => g.gradients(loss, [x], { recompute: [x, y] })).toThrow(/recompute boundary "x" is not computed by a node/);
    expect(() => g.gradients(loss, [x], { recompute: [z, y] })).toThrow(/must be in forward order/);
  });
});
