import type { Tool } from '@agentflow/core';
import { createDeadline, createOllamaModel } from '@agentflow/llm';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createGenerator } from '../generator/generator';
import { runFlow } from './run-flow';

const echoTool: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Returns its input.',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ output: text, truncated: false, durationMs: 0 }),
};

const action = (name: string, input: unknown) => ollamaReply(JSON.stringify({ thought: '', action: name, action_input: input }));

describe("runFlow's one deadline, the generator included", () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer(() => ({ kind: 'hang' }));
  });
  afterEach(async () => server.close());

  function agent(maxSteps: number) {
    // Per attempt and per call the model would wait minutes: only the run's deadline can end it.
    const model = createOllamaModel({ model: 'm', endpoints: [server.url], timeoutMs: 120_000, maxRetries: 4 });
    return {
      planner: createPlanner({ model, tools: [echoTool], maxRepairs: 0 }),
      tools: [echoTool],
      verifier: createVerifier({ rules: { maxSteps } }),
      generator: createGenerator({ model }),
    };
  }

  it('a planner server that never answers: the run ends at its limit, and the generator is not asked past it', async () => {
    const started = performance.now();
    const trajectory = await runFlow('q', agent(5), { timeLimitMs: 800 });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(trajectory).toMatchObject({
      termination: 'timeout',
      answer: null,
      steps: [],
      error: "The run's time limit (0.8 s) ran out after 0 steps, before an answer was written.",
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a generator whose server never answers is stopped by the same deadline', async () => {
    server.push(action('echo', { text: 'hi' }));
    const started = performance.now();
    const trajectory = await runFlow('q', agent(1), { timeLimitMs: 800 });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(trajectory).toMatchObject({
      termination: 'timeout',
      answer: null,
      error: "The run's time limit (0.8 s) ran out after 1 step, before an answer was written.",
    });
    expect(trajectory.steps).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it("a caller's signal that carries an earlier deadline ends the run as a timeout naming that limit, not as a cancellation", async () => {
    const command = createDeadline({ timeLimitMs: 600, what: 'the --time-limit' });
    const trajectory = await runFlow('q', agent(5), { signal: command.signal, timeLimitMs: 60_000 });
    expect(trajectory).toMatchObject({
      termination: 'timeout',
      answer: null,
      error: 'The --time-limit (0.6 s) ran out after 0 steps, before an answer was written.',
    });
  });

  it('a time limit above 2^31 - 1 ms does not overflow into "timeout after 0 steps"', async () => {
    server.push(action('finish', '42'));
    const trajectory = await runFlow('q', agent(5), { timeLimitMs: 3e9 });
    expect(trajectory).toMatchObject({ termination: 'finished', answer: '42' });
  });
});
