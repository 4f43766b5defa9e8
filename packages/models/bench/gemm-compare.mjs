// The matrix products under the training step, alone: ONNX Runtime's CPU MatMul (MLAS) against
// PyTorch's (its BLAS, with the kernels torch-side.mjs chooses), at the shapes of the 25M-parameter
// step of pytorch-compare.mjs (1,024 rows of hidden 512, intermediate 1536). A step of either side is
// mostly these products, so their rates bound what the step's time ratio can be.
// Usage: node bench/gemm-compare.mjs [--threads 2] [--repeats 30] [--blas-core auto|detected|NAME]
//          [--python /usr/bin/python3]   (after pnpm --filter @agentflow/tensor build)
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { createGraphBuilder, createRuntime } from '@agentflow/tensor';
import { torchSide } from './torch-side.mjs';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') || all[index + 1] === undefined ? 'true' : all[index + 1];
});
const threads = Number(args.threads ?? 2);
const repeats = Number(args.repeats ?? 30);
const python = args.python ?? '/usr/bin/python3';
// [rows, inner, columns]: the forward's x W (q/o, gate/up, down) and the backward's products of the same sizes.
const SHAPES = [
  [1024, 512, 512],
  [1024, 512, 1536],
  [1024, 1536, 512],
  [512, 1024, 1536],
];

/** A deterministic matrix of small values. */
function matrix(rows, columns, seed) {
  const data = new Float32Array(rows * columns);
  let state = seed;
  for (let index = 0; index < data.length; index++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    data[index] = (state / 2 ** 32 - 0.5) * 0.1;
  }
  return { dtype: 'float32', shape: [rows, columns], data };
}

async function onnxRuntimeRates() {
  const runtime = createRuntime({ device: 'cpu', intraOpThreads: threads, interOpThreads: 1 });
  const rates = [];
  for (const [m, k, n] of SHAPES) {
    const g = createGraphBuilder({ name: 'gemm' });
    g.output(g.matmul(g.input('a', 'float32', [m, k]), g.input('b', 'float32', [k, n])), 'c');
    const session = await runtime.createSession(g.toBytes(), { name: 'gemm' });
    const feeds = { a: matrix(m, k, 1), b: matrix(k, n, 2) };
    for (let index = 0; index < 3; index++) await session.run(feeds);
    const began = performance.now();
    for (let index = 0; index < repeats; index++) await session.run(feeds);
    rates.push((2 * m * k * n * repeats) / ((performance.now() - began) / 1000) / 1e9);
    await session.release();
  }
  return rates;
}

function pytorchRates(side) {
  const code = `
import json, sys, time, torch
torch.set_num_threads(${threads})
rates = []
for m, k, n in json.loads(sys.argv[1]):
    a, b = torch.randn(m, k) * 0.03, torch.randn(k, n) * 0.03
    for _ in range(3): a @ b
    began = time.perf_counter()
    for _ in range(${repeats}): a @ b
    rates.append(2 * m * k * n * ${repeats} / (time.perf_counter() - began) / 1e9)
print(json.dumps(rates))
`;
  const child = spawnSync(python, ['-c', code, JSON.stringify(SHAPES)], { encoding: 'utf8', env: side.environment });
  if (child.status !== 0) throw new Error(`PyTorch's products failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

const side = torchSide({ python, threads, blasCore: args['blas-core'] ?? 'auto' });
console.log(`# Matrix products alone, float32, ${threads} thread(s) a side, ${repeats} products each; machine ${cpus().length} cores (${cpus()[0]?.model})`);
console.log(side.ok ? `PyTorch ${side.version}, BLAS ${side.blas}, ${side.description}` : `PyTorch side skipped: ${side.reason}`);
const ours = await onnxRuntimeRates();
const theirs = side.ok ? pytorchRates(side) : [];
console.log('\n| [rows, inner, columns] | ONNX Runtime (MLAS) GFLOP/s | PyTorch GFLOP/s | ONNX Runtime / PyTorch |');
console.log('| --- | ---: | ---: | ---: |');
SHAPES.forEach((shape, index) => {
  const theirsRate = theirs[index];
  console.log(`| [${shape.join(', ')}] | ${ours[index].toFixed(1)} | ${theirsRate === undefined ? 'skipped' : theirsRate.toFixed(1)} | ${theirsRate === undefined ? '' : `${(ours[index] / theirsRate).toFixed(2)}x`} |`);
});
