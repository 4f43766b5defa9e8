import { AgentFlowError } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import type { ModelWeights } from '../weights/weight-names';

/**
 * [rows, columns] -> [columns, rows], row-major. Not cached: the copy lives only until the graph
 * is serialised, so a large model does not keep a second transposed copy of its weights.
 */
export function transpose2d(data: Float32Array, rows: number, columns: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let row = 0; row < rows; row++) {
    const offset = row * columns;
    for (let column = 0; column < columns; column++) out[column * rows + row] = data[offset + column]!;
  }
  return out;
}

/** Adds each weight as an initializer once, by name, and hands back the symbolic tensor. */
export interface WeightInitializers {
  /** The weight as stored ([out, in] for linears). */
  plain(name: string): SymbolicTensor;
  /** A linear weight transposed to [in, out], ready for x @ W. */
  transposed(name: string): SymbolicTensor;
}

export function createWeightInitializers(graph: GraphBuilder, weights: ModelWeights): WeightInitializers {
  const added = new Map<string, SymbolicTensor>();
  const lookup = (name: string) => {
    const tensor = weights.get(name);
    if (!tensor) throw new AgentFlowError({ code: 'NOT_FOUND', message: `Weight ${name} is missing.`, details: { name } });
    return tensor;
  };
  return {
    plain(name) {
      const key = `${name}`;
      let symbolic = added.get(key);
      if (!symbolic) {
        const tensor = lookup(name);
        symbolic = graph.initializer(name, { dtype: 'float32', shape: [...tensor.shape], data: tensor.data });
        added.set(key, symbolic);
      }
      return symbolic;
    },
    transposed(name) {
      const key = `${name}#T`;
      let symbolic = added.get(key);
      if (!symbolic) {
        const tensor = lookup(name);
        const [rows, columns] = tensor.shape as [number, number];
        symbolic = graph.initializer(`${name}.T`, {
          dtype: 'float32',
          shape: [columns, rows],
          data: transpose2d(tensor.data, rows, columns),
        });
        added.set(key, symbolic);
      }
      return symbolic;
    },
  };
}
