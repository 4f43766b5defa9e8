import type { GraphBuilder, SessionSettings, TensorRuntime, TensorSession } from '@agentflow/tensor';

/**
 * Opens a session from a built graph. The model's weights are bound to it (fed in place on the
 * CPU, one device copy per session on CUDA), so the serialised model holds only the graph and
 * small constants: no temporary file, no copy of the weights, no 2 GB protobuf limit.
 * `hostWeights` feeds them from their arrays on CUDA too (see SessionSettings.hostWeights).
 */
export async function createGraphSession(
  runtime: TensorRuntime,
  graph: GraphBuilder,
  name: string,
  settings: Pick<SessionSettings, 'hostWeights'> = {},
): Promise<TensorSession> {
  return runtime.openGraph(graph, { name, ...settings });
}
