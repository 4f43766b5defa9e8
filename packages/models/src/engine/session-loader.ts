import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GraphBuilder, TensorRuntime, TensorSession } from '@agentflow/tensor';

// protobuf caps a model at 2 GB; above this the graph goes through a file with external data.
const INLINE_LIMIT_BYTES = 1_500_000_000;

/** Creates a session from a built graph: in memory when small, via a temporary file when large. */
export async function createGraphSession(runtime: TensorRuntime, graph: GraphBuilder, name: string): Promise<TensorSession> {
  if (graph.summary().initializerBytes < INLINE_LIMIT_BYTES) {
    return runtime.createSession(graph.toBytes(), { name });
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentflow-models-'));
  try {
    const path = join(dir, `${name}.onnx`);
    await graph.save(path, { externalData: true });
    return await runtime.createSession(path, { name });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
