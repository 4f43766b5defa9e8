import { createPythonTool } from '@agentflow/executor';
import { createOllamaModel } from '@agentflow/llm';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createGenerator } from '../generator/generator';
import { continueFlow } from './continue-flow';
import { runFlow } from './run-flow';

const python = createPythonTool();
const unavailable = await python.unavailableReason().catch((error: unknown) => String(error));
if (unavailable) console.warn(`Skipping the python flow test: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('runFlow with the sandboxed python tool of @agentflow/executor', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterAll(async () => {
    await server.close();
    await python.dispose();
  });

  it('keeps Python state across steps of one task and answers from the finish input', async () => {
    const step = (action: string, input: unknown) =>
      ollamaReply(JSON.stringify({ thought: '', action, action_input: input }));
    server.push(step('python', { code: 'x = 6 * 7\nx' }), step('python', 'x + 1'), step('finish', '43'));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxRetries: 0 });
    const trajectory = await runFlow('What is 6*7+1?', {
      planner: createPlanner({ model, tools: [python], maxRepairs: 0 }),
      tools: [python],
      verifier: createVerifier(),
      generator: createGenerator(),
    });
    expect(trajectory.steps.map((s) => s.toolResult?.output.trim())).toEqual(['42', '43', undefined]);
    expect(trajectory.steps.map((s) => s.toolResult?.error)).toEqual([undefined, undefined, undefined]);
    expect(trajectory).toMatchObject({ termination: 'finished', answer: '43' });
  });

  it('continues after a python step in a fresh REPL, replaying the prefix code so its variables are back', async () => {
    const step = (action: string, input: unknown) =>
      ollamaReply(JSON.stringify({ thought: '', action, action_input: input }));
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], maxRetries: 0 });
    const modules = {
      planner: createPlanner({ model, tools: [python], maxRepairs: 0 }),
      tools: [python],
      verifier: createVerifier(),
      generator: createGenerator(),
    };
    server.push(step('python', 'import os\nx = 6 * 7\nprint(os.getpid(), x)'), step('finish', '42'));
    const source = await runFlow('What is 6*7?', modules, { taskId: 'task-py' });
    const recorded = source.steps[0]!.toolResult!;

    server.push(step('python', 'x + 1'), step('finish', '43'));
    const replayed = await continueFlow(source, 0, modules);
    // The prefix keeps its recorded output; the replay's output (another pid) is dropped.
    expect(replayed.steps[0]?.toolResult).toEqual(recorded);
    expect(replayed.steps[1]?.toolResult).toMatchObject({ output: '43\n' });
    expect(replayed.steps[1]?.toolResult?.error).toBeUndefined();

    server.push(step('python', 'x + 1'), step('finish', '?'));
    const fresh = await continueFlow(source, 0, modules, { replayTools: [] });
    expect(fresh.steps[1]?.toolResult?.error).toMatch(/NameError: name 'x' is not defined/);
  });
});
