import { AgentFlowError } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import { isHalfWeight, type ModelWeights } from '../weights/weight-names';

/**
 * Elements of a half-precision matrix cast to float32 at once by {@link WeightInitializers.head}:
 * 2^24 (64 MiB of float32). A larger head is cast and multiplied in blocks of rows, so a
 * Qwen3 head (151,936 rows) never exists whole in float32 during inference.
 */
export const HEAD_CAST_ELEMENTS = 2 ** 24;

/**
 * Binds each weight to the graph once, by name, over the model's own array: no copy is made
 * when the graph is built or a session opened (see GraphBuilder.weight), so every graph built
 * from one model (generation, scoring, training, the reference) shares one copy of it.
 *
 * Half-precision weights (float16, bfloat16) are bound as they are held and cast to float32 at
 * each use: every call of {@link WeightInitializers.float32} emits its own Cast next to the
 * MatMul that reads it, so ONNX Runtime frees the float32 matrix after that MatMul and at most
 * one matrix exists in float32 at a time (the backward of a training step recomputes the Cast
 * with its layer when layers are recomputed). The arithmetic, and its accumulation, is float32.
 */
export interface WeightInitializers {
  /** The weight as stored ([out, in] for linears, as PyTorch stores them; float16/bfloat16 as held). */
  plain(name: string): SymbolicTensor;
  /**
   * The weight in float32 at this use: itself when held in float32, else a Cast emitted here, of
   * a copy of the weight read only once `after` exists (ONNX Runtime runs a node as soon as its
   * inputs are ready: a Cast of the weight alone would run at the start of the graph and every
   * layer's float32 matrix would wait there for its use, measured). `after`: the tensor the
   * MatMul multiplies, with a dynamic first axis.
   */
  float32(name: string, after?: SymbolicTensor): SymbolicTensor;
  /** Rows of the [rows, width] weight at int64 `ids` ([...ids, width]), float32 (half-precision rows are gathered, then cast). */
  gatherRows(name: string, ids: SymbolicTensor): SymbolicTensor;
  /**
   * `x @ W^T` for the [rows, width] weight (the LM head): [..., width] -> [..., rows]. A
   * half-precision W over {@link HEAD_CAST_ELEMENTS} is read in blocks of rows, each cast and
   * multiplied before the next, the logits concatenated.
   */
  head(x: SymbolicTensor, name: string): SymbolicTensor;
  /**
   * The weights bound so far, by name, each once (a tied head reads the embedding's tensor, so
   * it has one entry): what a full-parameter training graph differentiates the loss with respect to.
   */
  bound(): ReadonlyMap<string, SymbolicTensor>;
}

/** Settings of {@link createWeightInitializers}. */
export interface WeightInitializersSettings {
  /** Elements of a half-precision head cast at once; default {@link HEAD_CAST_ELEMENTS}. */
  headCastElements?: number;
}

export function createWeightInitializers(graph: GraphBuilder, weights: ModelWeights, settings: WeightInitializersSettings = {}): WeightInitializers {
  const castElements = settings.headCastElements ?? HEAD_CAST_ELEMENTS;
  const added = new Map<string, SymbolicTensor>();
  const tensorOf = (name: string) => {
    const tensor = weights.get(name);
    if (!tensor) throw new AgentFlowError({ code: 'NOT_FOUND', message: `Weight ${name} is missing.`, details: { name } });
    return tensor;
  };
  const plain = (name: string) => {
    let symbolic = added.get(name);
    if (!symbolic) {
      const tensor = tensorOf(name);
      symbolic = isHalfWeight(tensor)
        ? graph.weight(name, { dtype: tensor.dtype, shape: [...tensor.shape], data: tensor.data })
        : graph.weight(name, { dtype: 'float32', shape: [...tensor.shape], data: tensor.data });
      added.set(name, symbolic);
    }
    return symbolic;
  };
  // Rows [start, end) of a weight, read when `after` exists: 0 * after's first dimension joins the indices.
  const rowsAfter = (name: string, start: number, end: number, after: SymbolicTensor | undefined) => {
    const indices = graph.range(start, end, 1, 'int64');
    return graph.gather(plain(name), after ? graph.add(indices, graph.mul(graph.shape(after, 0, 1), 0)) : indices);
  };
  const float32 = (name: string, after?: SymbolicTensor) => {
    const tensor = tensorOf(name);
    if (!isHalfWeight(tensor)) return plain(name);
    return graph.cast(after ? rowsAfter(name, 0, tensor.shape[0]!, after) : plain(name), 'float32');
  };
  return {
    plain,
    float32,
    gatherRows(name, ids) {
      const rows = graph.gather(plain(name), ids);
      return isHalfWeight(tensorOf(name)) ? graph.cast(rows, 'float32') : rows;
    },
    head(x, name) {
      const tensor = tensorOf(name);
      const [rows, width] = tensor.shape as [number, number];
      if (!isHalfWeight(tensor) || rows * width <= castElements) return graph.matmulTransposed(x, float32(name, x));
      const block = Math.max(1, Math.floor(castElements / width));
      const parts: SymbolicTensor[] = [];
      for (let start = 0; start < rows; start += block) {
        // Gather, not Slice: ONNX Runtime fuses Slices of one tensor into a Split, a copy of the whole head (measured).
        const rowsOf = rowsAfter(name, start, Math.min(rows, start + block), x); // [block, width]
        parts.push(graph.matmulTransposed(x, graph.cast(rowsOf, 'float32'))); // [..., block]
      }
      return graph.concat(parts, -1); // [..., rows]
    },
    bound: () => new Map(added),
  };
}
