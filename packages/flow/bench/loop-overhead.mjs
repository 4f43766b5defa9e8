// The agent loop's own overhead per step: runFlow with an instant in-process model and
// tool, against a baseline of the same model and tool calls made as bare function calls.
// Run: pnpm --filter @agentflow/flow build && pnpm --filter @agentflow/flow bench
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { z } from 'zod';
import { createGenerator, runFlow } from '../dist/index.js';

const STEPS = 10;
const RUNS = Number(process.env.BENCH_RUNS ?? 500);
const WARMUP = 100;

function instantModel() {
  let call = 0;
  return {
    specificationVersion: 'v1',
    provider: 'bench',
    modelId: 'instant',
    async chat() {
      const step = call++ % STEPS;
      const action =
        step === STEPS - 1
          ? { thought: 'done', action: 'finish', action_input: String(step) }
          : { thought: `step ${step}`, action: 'echo', action_input: { text: `value ${step}` } };
      return { text: JSON.stringify(action), finishReason: 'stop', model: 'instant' };
    },
  };
}

const echo = {
  name: 'echo',
  description: 'Returns its input.',
  inputSchema: z.object({ text: z.string().describe('Text to return') }),
  async execute({ text }) {
    return { output: text, truncated: false, durationMs: 0 };
  },
};

// Modules are built once and reused across runs, as a rollout worker does.
const flowModel = instantModel();
const modules = {
  planner: createPlanner({ model: flowModel, tools: [echo], maxRepairs: 0 }),
  tools: [echo],
  verifier: createVerifier({ rules: { maxSteps: STEPS } }),
  generator: createGenerator(),
};

async function flowRun() {
  const trajectory = await runFlow('What does echo return?', modules);
  if (trajectory.steps.length !== STEPS || trajectory.termination !== 'finished') {
    throw new Error(`unexpected run: ${trajectory.steps.length} steps, ${trajectory.termination}`);
  }
}

async function bareRun() {
  const model = instantModel();
  for (let step = 0; step < STEPS; step++) {
    const response = await model.chat({ messages: [{ role: 'user', content: 'q' }] });
    const action = JSON.parse(response.text);
    if (action.action !== 'finish') await echo.execute(action.action_input, {});
  }
}

async function measure(run) {
  for (let i = 0; i < WARMUP; i++) await run();
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) await run();
  return (performance.now() - started) / (RUNS * STEPS);
}

const bareMs = await measure(bareRun);
const flowMs = await measure(flowRun);
const lines = [
  `node ${process.version}, ${RUNS} runs x ${STEPS} steps (after ${WARMUP} warm-up runs)`,
  `baseline (bare model + tool calls): ${(bareMs * 1000).toFixed(2)} us/step`,
  `runFlow (planner, tool registry, memory, verifier, events): ${(flowMs * 1000).toFixed(2)} us/step`,
  `loop overhead: ${((flowMs - bareMs) * 1000).toFixed(2)} us/step (${(flowMs / bareMs).toFixed(1)}x the bare calls)`,
];
console.log(lines.join('\n'));
