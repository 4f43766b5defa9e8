import { AgentFlowError, describeValue } from '@agentflow/core';
import { emit, type GraphNode, type GraphState } from '../graph/graph-state';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';

/**
 * Activation recomputation (gradient checkpointing) for {@link buildGradients}. The forward
 * nodes between consecutive boundary tensors form segments; the backward pass of a segment does
 * not read the forward's intermediate tensors but recomputes them from the segment's input
 * boundary, so ONNX Runtime frees each forward intermediate as soon as the forward is done with
 * it. What stays alive between the forward and the backward is the boundaries (a transformer's
 * residual stream at each layer input) instead of every layer's activations, for about one
 * more forward pass of compute.
 */
export interface RecomputePlan {
  /** The segment of the node at `index` in the forward node list, or -1 when it is in none. */
  segmentOf(index: number): number;
  /**
   * The node as its gradient rule should see it: inputs and outputs produced inside its segment
   * replaced by recomputed copies. The first call for a segment emits the copies, made to depend
   * on `upstream` (the gradient reaching the segment's output boundary) so that ONNX Runtime
   * cannot run them before the backward pass reaches the segment.
   */
  remapped(node: GraphNode, index: number, upstream: (name: string) => SymbolicTensor | undefined): GraphNode;
}

export function planRecompute(state: GraphState, g: GraphBuilder, nodes: readonly GraphNode[], boundaries: readonly SymbolicTensor[]): RecomputePlan {
  const positions = new Map(nodes.map((node, index) => [node, index]));
  /** The forward position of the node computing `name`, or -1 (a graph input, a weight, a later node). */
  const producedAt = (name: string) => {
    const producer = state.producers.get(name);
    return producer === undefined ? -1 : (positions.get(producer) ?? -1);
  };
  const starts = boundaries.map((boundary) => {
    const index = producedAt(boundary.name);
    if (index < 0) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `gradients: recompute boundary ${describeValue(boundary.name)} is not computed by a node before the output (a graph input or weight cannot be a boundary; pass tensors the forward computes).`,
        details: { boundary: boundary.name },
      });
    }
    return index;
  });
  starts.forEach((start, position) => {
    if (position > 0 && start <= starts[position - 1]!) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `gradients: recompute boundaries must be in forward order; ${describeValue(boundaries[position]!.name)} is computed before ${describeValue(boundaries[position - 1]!.name)}.`,
        details: { boundaries: boundaries.map((boundary) => boundary.name) },
      });
    }
  });
  // Segment k: the nodes after boundary k's producer up to and including boundary k+1's producer.
  const segmentOf = (index: number) => {
    for (let k = 0; k + 1 < starts.length; k++) if (index > starts[k]! && index <= starts[k + 1]!) return k;
    return -1;
  };
  const copies = new Map<number, Map<string, SymbolicTensor>>();

  const emitCopies = (k: number, upstream: (name: string) => SymbolicTensor | undefined): Map<string, SymbolicTensor> => {
    const map = new Map<string, SymbolicTensor>();
    const input = boundaries[k]!;
    // The gradients the backward of segment k+1 completes: its output boundary's and those of
    // the tensors from outside any segment that it reads (parameters such as LoRA matrices).
    // Without the parameters, ONNX Runtime's depth-first order runs their gradient nodes last,
    // keeping every segment's recomputed inputs alive until the end.
    const next = k + 1 < starts.length - 1 ? k + 1 : -1;
    const names = new Set<string>();
    if (next >= 0) {
      for (let index = starts[next]! + 1; index <= starts[next + 1]!; index++) {
        for (const x of nodes[index]!.inputs) {
          if (x !== undefined && x.name !== boundaries[next]!.name && segmentOf(producedAt(x.name)) < 0) names.add(x.name);
        }
      }
    }
    const ready = [boundaries[k + 1]!.name, ...names]
      .map((name) => upstream(name))
      .filter((gradient): gradient is SymbolicTensor => gradient !== undefined)
      .map((gradient) => g.reduceSum(gradient, [...gradient.shape.keys()], false));
    // input + 0 * (sum(gradients) > 0): the same values, available only once the gradients are.
    // The comparison makes the term exactly 0 even when a gradient is infinite or NaN.
    const delayed =
      ready.length === 0
        ? input
        : g.add(input, g.mul(g.cast(g.greater(ready.reduce((sum, x) => g.add(sum, x)), 0), input.dtype), 0));
    map.set(input.name, delayed);
    for (let index = starts[k]! + 1; index <= starts[k + 1]!; index++) {
      const node = nodes[index]!;
      const inputs = node.inputs.map((x) => (x === undefined ? undefined : (map.get(x.name) ?? x)));
      const outputs = emit(
        state,
        node.opType,
        inputs,
        node.outputs.map((y) => ({ dtype: y.dtype, shape: y.shape })),
        { attributes: node.attributes, meta: node.meta, domain: node.domain },
      );
      node.outputs.forEach((y, position) => {
        map.set(y.name, outputs[position]!);
      });
      // Constant values are read by shape inference and gradient rules: keep them known.
      node.outputs.forEach((y, position) => {
        const value = state.constantValues.get(y.name);
        if (value !== undefined) state.constantValues.set(outputs[position]!.name, value);
      });
    }
    return map;
  };

  return {
    segmentOf,
    remapped(node, index, upstream) {
      const k = segmentOf(index);
      if (k < 0) return node;
      let map = copies.get(k);
      if (map === undefined) {
        map = emitCopies(k, upstream);
        copies.set(k, map);
      }
      const swap = (x: SymbolicTensor) => map!.get(x.name) ?? x;
      return { ...node, inputs: node.inputs.map((x) => (x === undefined ? undefined : swap(x))), outputs: node.outputs.map(swap) };
    },
  };
}
