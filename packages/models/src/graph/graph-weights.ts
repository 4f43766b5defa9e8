import { AgentFlowError } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import type { ModelWeights } from '../weights/weight-names';

/**
 * Binds each weight to the graph once, by name, over the model's own array: no copy is made
 * when the graph is built or a session opened (see GraphBuilder.weight), so every graph built
 * from one model (generation, scoring, training, the reference) shares one copy of it.
 */
export interface WeightInitializers {
  /** The weight as stored ([out, in] for linears, as PyTorch stores them). */
  plain(name: string): SymbolicTensor;
  /**
   * The weights bound so far, by name, each once (a tied head reads the embedding's tensor, so
   * it has one entry): what a full-parameter training graph differentiates the loss with respect to.
   */
  bound(): ReadonlyMap<string, SymbolicTensor>;
}

export function createWeightInitializers(graph: GraphBuilder, weights: ModelWeights): WeightInitializers {
  const added = new Map<string, SymbolicTensor>();
  return {
    plain(name) {
      let symbolic = added.get(name);
      if (!symbolic) {
        const tensor = weights.get(name);
        if (!tensor) throw new AgentFlowError({ code: 'NOT_FOUND', message: `Weight ${name} is missing.`, details: { name } });
        symbolic = graph.weight(name, { dtype: 'float32', shape: [...tensor.shape], data: tensor.data });
        added.set(name, symbolic);
      }
      return symbolic;
    },
    bound: () => new Map(added),
  };
}
