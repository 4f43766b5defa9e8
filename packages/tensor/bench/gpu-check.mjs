// Runs the benchmark graphs on the CUDA execution provider and on the CPU with the same
// inputs and compares every output. Needs onnxruntime-node's CUDA provider
// (ONNXRUNTIME_NODE_INSTALL=cuda12 when installing) and a GPU.
// Usage: node packages/tensor/bench/gpu-check.mjs   (after pnpm --filter @agentflow/tensor build)
import { createRuntime } from '../dist/index.js';
import { buildAttention, buildMatmulStack, makeFeeds } from './graphs.mjs';

// CUDA MatMuls may use TF32 (10-bit mantissa), so compare at a TF32-level tolerance.
const relativeTolerance = 2e-2;

const cpu = createRuntime({ device: 'cpu' });
const cuda = createRuntime({ device: 'cuda' });
let failures = 0;
for (const [name, graph] of [
  ['matmul-stack forward+backward', buildMatmulStack(true)],
  ['attention forward+backward', buildAttention(true)],
]) {
  const feeds = makeFeeds(graph.inputs);
  const onCpu = await (await cpu.createSession(graph.bytes, { name })).run(feeds);
  let gpuSession;
  try {
    gpuSession = await cuda.createSession(graph.bytes, { name });
  } catch (error) {
    if (error?.code !== 'DEVICE_UNAVAILABLE') throw error;
    console.log(`gpu-check cannot run here: ${error.message}`);
    process.exit(2);
  }
  const onGpu = await gpuSession.run(feeds);
  const t0 = performance.now();
  await gpuSession.run(feeds);
  const milliseconds = performance.now() - t0;
  for (const output of Object.keys(onCpu)) {
    const a = onCpu[output].data;
    const b = onGpu[output].data;
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < a.length; i++) {
      worst = Math.max(worst, Math.abs(a[i] - b[i]));
      scale = Math.max(scale, Math.abs(a[i]));
    }
    const relative = worst / (scale || 1);
    const ok = relative <= relativeTolerance;
    if (!ok) failures += 1;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name} ${output}: max |cpu - cuda| = ${worst.toExponential(3)} (${relative.toExponential(3)} of max |cpu|)`);
  }
  console.log(`     ${name}: one CUDA run took ${milliseconds.toFixed(1)} ms (device ${gpuSession.device})`);
}
process.exitCode = failures === 0 ? 0 : 1;
