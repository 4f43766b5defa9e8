// Runs the benchmark graphs (a MatMul stack and an attention block, forward+backward) on the
// CUDA execution provider and on the CPU with the same inputs and compares every output.
// Needs the CUDA provider (`pnpm gpu:setup`) and a GPU; `pnpm gpu:check` runs this and more.
// Usage: node packages/tensor/bench/gpu-check.mjs   (after pnpm --filter @agentflow/tensor build)
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../dist/index.js';
import { buildAttention, buildMatmulStack, makeFeeds } from './graphs.mjs';

/** CUDA MatMuls may use TF32 (10-bit mantissa), so outputs are compared at a TF32-level tolerance. */
export const RELATIVE_TOLERANCE = 2e-2;

/** Largest |a - b| over largest |a|, for two outputs of the same shape. */
export function relativeError(a, b) {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(a[i]));
  }
  return { worst, relative: worst / (scale || 1) };
}

/**
 * Compares CUDA with the CPU on the benchmark graphs. Returns one row per output
 * ({ check, output, worst, relative, ok }) and the time of one CUDA run per graph; throws
 * DEVICE_UNAVAILABLE (an AgentFlowError) when CUDA cannot start.
 */
export async function compareGraphsOnCuda() {
  const cpu = createRuntime({ device: 'cpu' });
  const cuda = createRuntime({ device: 'cuda' });
  const rows = [];
  for (const [name, graph] of [
    ['matmul-stack forward+backward', buildMatmulStack(true)],
    ['attention forward+backward', buildAttention(true)],
  ]) {
    const feeds = makeFeeds(graph.inputs);
    const cpuSession = await cpu.createSession(graph.bytes, { name });
    const onCpu = await cpuSession.run(feeds);
    const gpuSession = await cuda.createSession(graph.bytes, { name });
    const onGpu = await gpuSession.run(feeds);
    const t0 = performance.now();
    await gpuSession.run(feeds);
    const cudaMs = performance.now() - t0;
    for (const output of Object.keys(onCpu)) {
      const { worst, relative } = relativeError(onCpu[output].data, onGpu[output].data);
      rows.push({ check: name, output, worst, relative, ok: relative <= RELATIVE_TOLERANCE, cudaMs });
    }
    await cpuSession.release();
    await gpuSession.release();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let rows;
  try {
    rows = await compareGraphsOnCuda();
  } catch (error) {
    if (error?.code !== 'DEVICE_UNAVAILABLE') throw error;
    console.log(`gpu-check cannot run here: ${error.message}`);
    process.exit(3);
  }
  for (const row of rows) {
    console.log(
      `${row.ok ? 'ok  ' : 'FAIL'} ${row.check} ${row.output}: max |cpu - cuda| = ${row.worst.toExponential(3)} (${row.relative.toExponential(3)} of max |cpu|); one CUDA run ${row.cudaMs.toFixed(1)} ms`,
    );
  }
  process.exitCode = rows.every((row) => row.ok) ? 0 : 1;
}
