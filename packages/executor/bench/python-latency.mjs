// Python tool latency: warm calls on a live sandboxed REPL, against the cold start of a
// new task's sandbox and against spawning a bare `python -c pass` (no sandbox), all
// measured in this run. Usage: pnpm --filter @agentflow/executor bench [warmCalls]
import { execFileSync, spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { createPythonTool } from '../dist/index.js';

const warmCalls = Number(process.argv[2] ?? 200);
const coldStarts = 10;
const spawns = 20;

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const summary = (label, values) =>
  `${label.padEnd(44)} n=${String(values.length).padStart(4)}  p50 ${quantile(values, 0.5).toFixed(2).padStart(8)} ms  p95 ${quantile(values, 0.95).toFixed(2).padStart(8)} ms`;
const context = (taskId) => ({ taskId, signal: new AbortController().signal });

const tool = createPythonTool();
const missing = await tool.unavailableReason();
if (missing) {
  console.error(`cannot benchmark: ${missing}`);
  process.exit(1);
}
const executable = execFileSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], { encoding: 'utf8' }).trim();

// Baseline: a fresh interpreter per call, unsandboxed.
const bare = [];
for (let index = 0; index < spawns; index += 1) {
  const started = performance.now();
  spawnSync(executable, ['-c', 'pass']);
  bare.push(performance.now() - started);
}

// Cold: the first call of a new task starts bwrap and the driver.
const cold = [];
for (let index = 0; index < coldStarts; index += 1) {
  const started = performance.now();
  const result = await tool.execute({ code: '1+1' }, context(`cold-${index}`));
  cold.push(performance.now() - started);
  if (result.output !== '2\n') throw new Error(`unexpected output ${JSON.stringify(result)}`);
  await tool.dispose(`cold-${index}`);
}

// Warm: the same task's REPL, already running.
await tool.execute({ code: 'import sympy' }, context('warm'));
const warm = [];
for (let index = 0; index < warmCalls; index += 1) {
  const started = performance.now();
  const result = await tool.execute({ code: '1+1' }, context('warm'));
  warm.push(performance.now() - started);
  if (result.output !== '2\n') throw new Error(`unexpected output ${JSON.stringify(result)}`);
}
const sympyCalls = [];
for (let index = 0; index < 50; index += 1) {
  const started = performance.now();
  await tool.execute({ code: `sympy.factorint(${1_000_003 + index})` }, context('warm'));
  sympyCalls.push(performance.now() - started);
}
await tool.dispose();

console.log(`python ${executable}, node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0].toFixed(1)}`);
console.log(summary('bare `python -c pass` spawn (no sandbox)', bare));
console.log(summary('cold: new task, sandbox start + `1+1`', cold));
console.log(summary('warm: `1+1` on the live REPL', warm));
console.log(summary('warm: `sympy.factorint(n)` on the live REPL', sympyCalls));
console.log(`warm p50 is ${(quantile(bare, 0.5) / quantile(warm, 0.5)).toFixed(1)}x faster than a bare spawn; cold start costs ${(quantile(cold, 0.5) / quantile(bare, 0.5)).toFixed(1)}x a bare spawn`);
