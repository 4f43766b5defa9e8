import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';

/** HF's RMSNorm (Qwen2RMSNorm, Qwen3RMSNorm, LlamaRMSNorm) over the last axis: x * rsqrt(mean(x^2) + eps) * weight. */
export function rmsNorm(graph: GraphBuilder, x: SymbolicTensor, weight: SymbolicTensor, eps: number): SymbolicTensor {
  const variance = graph.reduceMean(graph.mul(x, x), [-1], true);
  return graph.mul(graph.mul(x, graph.reciprocal(graph.sqrt(graph.add(variance, eps)))), weight);
}

/** rotate_half: cat(-x2, x1) over the last axis. */
export function rotateHalf(graph: GraphBuilder, x: SymbolicTensor, headDim: number): SymbolicTensor {
  const [first, second] = graph.split(x, [headDim / 2, headDim / 2], -1) as [SymbolicTensor, SymbolicTensor];
  return graph.concat([graph.neg(second), first], -1);
}
