import type { GraphBuilder, TensorRuntime, TensorSession } from '@agentflow/tensor';

/**
 * Opens a session from a built graph. The model's weights are bound to it (fed in place on the
 * CPU, one device copy per session on CUDA), so the serialised model holds only the graph and
 * small constants: no temporary file, no copy of the weights, no 2 GB protobuf limit.
 */
export async function createGraphSession(runtime: TensorRuntime, graph: GraphBuilder, name: string): Promise<TensorSession> {
  return runtime.openGraph(graph, { name });
}
