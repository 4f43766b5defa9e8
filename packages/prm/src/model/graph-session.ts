import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GraphBuilder, TensorRuntime, TensorSession } from '@agentflow/tensor';

// protobuf caps a model at 2 GB: a Qwen3-0.6B backbone in float32 (2.4 GB) goes through a file.
const INLINE_LIMIT_BYTES = 1_500_000_000;

/** A session from a built graph: in memory when small, through a temporary file with external data when large. */
export async function createGraphSession(runtime: TensorRuntime, graph: GraphBuilder, name: string): Promise<TensorSession> {
  if (graph.summary().initializerBytes < INLINE_LIMIT_BYTES) return runtime.createSession(graph.toBytes(), { name });
  const dir = mkdtempSync(join(tmpdir(), 'agentflow-prm-'));
  try {
    const path = join(dir, `${name}.onnx`);
    await graph.save(path, { externalData: true });
    return await runtime.createSession(path, { name });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
