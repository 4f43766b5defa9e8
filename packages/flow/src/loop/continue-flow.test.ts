import { AgentFlowError, type RunEvent, type Tool, trajectorySchema } from '@agentflow/core';
import { createOllamaModel } from '@agentflow/llm';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createGenerator } from '../generator/generator';
import { continueFlow } from './continue-flow';
import { runFlow } from './run-flow';

const populations: Record<string, number> = { Brisk: 5120, Veloria: 88_000 };
const action = (name: string, input: unknown, thought = '') =>
  ollamaReply(JSON.stringify({ thought, action: name, action_input: input }));
const messagesOf = (body: unknown) => (body as { messages: Array<{ role: string; content: string }> }).messages;

describe('continueFlow against a scripted loopback Ollama server', () => {
  let server: LoopbackServer;
  let lookups: string[];
  const lookupTool: Tool<{ city: string }> = {
    name: 'lookup_population',
    description: 'Returns the population of a city.',
    inputSchema: z.object({ city: z.string().describe('City name') }),
    async execute({ city }) {
      lookups.push(city);
      const value = populations[city];
      if (value === undefined) throw new Error(`no city named ${city}`);
      return { output: String(value), truncated: false, durationMs: 0 };
    },
  };
  beforeEach(async () => {
    server = await startLoopbackServer();
    lookups = [];
  });
  afterEach(async () => server.close());

  const agent = () => {
    const model = createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url], maxRetries: 0 });
    return {
      planner: createPlanner({ model, tools: [lookupTool], maxRepairs: 0 }),
      tools: [lookupTool],
      verifier: createVerifier({ rules: { maxSteps: 6 } }),
      generator: createGenerator(),
    };
  };

  /** A four-step run: a lookup, a format error, a lookup, finish. */
  async function original() {
    server.push(
      action('lookup_population', { city: 'Brisk' }, 'Brisk first.'),
      ollamaReply('{"thought": "sum", "action": '),
      action('lookup_population', { city: 'Veloria' }),
      action('finish', '93120'),
    );
    const trajectory = await runFlow('Sum of both populations?', agent(), { trajectoryId: 'orig', taskId: 'task-1' });
    expect(trajectory.steps).toHaveLength(4);
    return trajectory;
  }

  it('keeps steps 0..j verbatim without re-running their tools, shows their results to the planner, and goes on', async () => {
    const source = await original();
    const requestsBefore = server.requests.length;
    server.push(action('lookup_population', { city: 'Veloria' }, 'Now the other one.'), action('finish', '93120'));
    const events: RunEvent[] = [];
    const continued = await continueFlow(source, 1, { ...agent(), listener: (event) => events.push(event) });

    expect(trajectorySchema.parse(continued)).toEqual(continued);
    expect(continued.steps.slice(0, 2)).toEqual(source.steps.slice(0, 2));
    expect(continued.steps.map((step) => step.index)).toEqual([0, 1, 2, 3]);
    expect(continued).toMatchObject({ taskId: 'task-1', question: source.question, termination: 'finished', answer: '93120' });
    expect(continued.id).not.toBe(source.id);
    // Brisk was looked up once, by the original run: the prefix's tool was not run again.
    expect(lookups).toEqual(['Brisk', 'Veloria', 'Veloria']);
    // The planner's prompt for step j+1 holds the prefix's tool result and format error, and nothing after.
    const prompt = messagesOf(server.requests[requestsBefore]!.body);
    const text = prompt.map((message) => message.content).join('\n');
    expect(text).toContain('Result: 5120');
    expect(text).toContain('Format error: not valid JSON');
    expect(text).not.toContain('88000');
    expect(continued.steps[2]?.prompt).toEqual(prompt);
    expect(continued.steps[2]?.toolResult?.output).toBe('88000');
    expect(events.filter((event) => event.type === 'step-start').map((event) => event.index)).toEqual([2, 3]);
  });

  it('writes only the answer again when the prefix ends with the finish action', async () => {
    const source = await original();
    const requestsBefore = server.requests.length;
    const continued = await continueFlow(source, 3, agent(), { trajectoryId: 'again' });
    expect(server.requests).toHaveLength(requestsBefore);
    expect(continued).toMatchObject({ id: 'again', steps: source.steps, termination: 'finished', answer: '93120' });
  });

  it("takes an LLM verifier's stop at the end of the prefix as the end of the run", async () => {
    const source = await original();
    const stopped = {
      ...source,
      steps: source.steps.map((step) => (step.index === 2 ? { ...step, verdict: { stop: true, reason: 'llm_stop' as const } } : step)),
    };
    const requestsBefore = server.requests.length;
    const continued = await continueFlow(stopped, 2, agent());
    expect(server.requests).toHaveLength(requestsBefore);
    expect(continued.steps).toEqual(stopped.steps.slice(0, 3));
    // No finish input and no generator model: no answer, but the run did finish.
    expect(continued).toMatchObject({ termination: 'finished', answer: null });
  });

  it('counts the prefix in maxSteps', async () => {
    const source = await original();
    const continued = await continueFlow(source, 1, agent(), { maxSteps: 2 });
    expect(continued).toMatchObject({ termination: 'max_steps', answer: null });
    expect(continued.steps).toEqual(source.steps.slice(0, 2));
  });

  it('rejects an afterStep that is not a step of the trajectory, naming it', async () => {
    const source = await original();
    for (const afterStep of [-1, 4, 1.5]) {
      const error = await continueFlow(source, afterStep, agent()).catch((caught: unknown) => caught);
      expect(AgentFlowError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
      expect((error as Error).message).toBe(
        `continueFlow: afterStep must be a step index of trajectory orig (0 to 3), got ${afterStep}.`,
      );
    }
    const shuffled = { ...source, steps: [source.steps[1]!, source.steps[0]!] };
    await expect(continueFlow(shuffled, 1, agent())).rejects.toThrow(/has step index 1 at position 0/);
    await expect(continueFlow({ ...source, steps: 'none' } as never, 0, agent())).rejects.toThrow(/needs a trajectory: steps/);
  });
});
