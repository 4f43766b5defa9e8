import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';

/** One layer's fixed-capacity key/value cache, read in place: [batch, kvHeads, capacity, headDim] each. */
export interface LayerCache {
  key: SymbolicTensor;
  value: SymbolicTensor;
}

/**
 * softmax(scale * q.k + mask) v with every query row against every key at once, grouped-query
 * heads without copying keys: `query` [batch, kvHeads, groups, sequence, headDim], `key` and
 * `value` [batch, kvHeads, sequence, headDim] of the tokens of this run, `maskBias` [batch, 1, 1,
 * sequence, capacity + sequence] (0 where visible, a large negative elsewhere). Returns
 * [batch, kvHeads, groups, sequence, headDim].
 *
 * With `cache`, the keys of earlier tokens are read from it where they lie (FusedMatMul with
 * transB, no transposed copy, no concatenated copy of the cache): their scores come before the
 * new tokens' in one softmax, and the output adds probabilities x cache values to probabilities
 * x new values. Slots the mask hides get probability 0 exactly. A cache of capacity 0 gives the
 * values of the formula without one, bit for bit (an empty product adds zeros).
 */
export function fullAttention(
  graph: GraphBuilder,
  query: SymbolicTensor,
  key: SymbolicTensor,
  value: SymbolicTensor,
  maskBias: SymbolicTensor,
  scale: number,
  cache?: LayerCache,
): SymbolicTensor {
  const newScores = graph.mul(graph.matmul(query, graph.transpose(graph.unsqueeze(key, [2]), [0, 1, 2, 4, 3])), scale); // [batch, kvHeads, groups, sequence, sequence]
  if (!cache) return graph.matmul(graph.softmax(graph.add(newScores, maskBias), -1), graph.unsqueeze(value, [2]));
  // The scale goes on the query as a [headDim] vector, not a scalar: ONNX Runtime folds a scalar
  // Mul into the product's alpha, and MLAS's one-row kernel (every decode step's) takes alpha 1
  // only; with alpha 0.125 the product packed the whole cache first, 2-3x slower (measured).
  const headDim = cache.key.shape[3] as number;
  const scaledQuery = graph.mul(query, graph.constant({ dtype: 'float32', shape: [headDim], data: new Float32Array(headDim).fill(scale) }));
  const cacheScores = graph.matmulTransposed(scaledQuery, graph.unsqueeze(cache.key, [2])); // [batch, kvHeads, groups, sequence, capacity]
  const probabilities = graph.softmax(graph.add(graph.concat([cacheScores, newScores], -1), maskBias), -1); // [..., sequence, capacity + sequence]
  const capacity = graph.shape(cache.key, 2, 3); // [1]
  const fromCache = graph.slice(probabilities, { starts: [0], ends: capacity, axes: [-1] }); // [..., sequence, capacity]
  const fromNew = graph.slice(probabilities, { starts: capacity, ends: [Number.MAX_SAFE_INTEGER], axes: [-1] }); // [..., sequence, sequence]
  return graph.add(graph.matmul(fromCache, graph.unsqueeze(cache.value, [2])), graph.matmul(fromNew, graph.unsqueeze(value, [2])));
}
