import { type RunEvent, type Tool, trajectorySchema } from '@agentflow/core';
import { createToolRegistry } from '@agentflow/executor';
import { createOllamaModel } from '@agentflow/llm';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createGenerator } from '../generator/generator';
import { runFlow } from './run-flow';

const populations: Record<string, number> = { Brisk: 5120, Veloria: 88_000 };

const lookupTool: Tool<{ city: string }> = {
  name: 'lookup_population',
  description: 'Returns the population of a city.',
  inputSchema: z.object({ city: z.string().describe('City name') }),
  async execute({ city }) {
    const value = populations[city];
    if (value === undefined) throw new Error(`no city named ${city}`);
    return { output: String(value), truncated: false, durationMs: 0 };
  },
};

const hangingTool: Tool<{ seconds: number }> = {
  name: 'wait',
  description: 'Waits, ignoring cancellation.',
  inputSchema: z.object({ seconds: z.number() }),
  execute: () => new Promise(() => {}),
};

const action = (name: string, input: unknown, thought = '') =>
  ollamaReply(JSON.stringify({ thought, action: name, action_input: input }));

describe('runFlow against a scripted loopback Ollama server', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  function agent(settings: { tools?: Tool[]; rules?: Record<string, number>; generatorModel?: boolean; maxRetries?: number } = {}) {
    const model = createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url], maxRetries: settings.maxRetries ?? 0 });
    const tools = settings.tools ?? [lookupTool, hangingTool];
    return {
      planner: createPlanner({ model, tools, maxRepairs: 0 }),
      tools,
      verifier: createVerifier({ rules: { maxSteps: 6, ...settings.rules } }),
      generator: createGenerator(settings.generatorModel ? { model } : {}),
    };
  }

  it('runs a multi-step task: tool calls, a format error, a tool error, then finish', async () => {
    server.push(
      action('lookup_population', { city: 'Brisk' }, 'Find the population first.'),
      ollamaReply('{"thought": "double it", "action": '),
      action('lookup_population', 'Atlantis'),
      action('finish', '10240', 'Twice 5120.'),
    );
    const events: RunEvent[] = [];
    const trajectory = await runFlow('What is twice the population of Brisk?', { ...agent(), listener: (e) => events.push(e) }, {
      trajectoryId: 't-1',
      taskId: 'task-1',
    });
    expect(trajectorySchema.parse(trajectory)).toEqual(trajectory);
    expect(trajectory).toMatchObject({ id: 't-1', taskId: 'task-1', termination: 'finished', answer: '10240' });
    const [first, second, third, fourth] = trajectory.steps;
    expect(first?.toolResult).toMatchObject({ output: '5120' });
    expect(second?.action).toBeNull();
    expect(second?.parseError).toMatch(/not valid JSON/);
    expect(second?.completion).toBe('{"thought": "double it", "action": ');
    // A bare string input fills the tool's only required string field; the thrown error is recorded.
    expect(third?.toolResult?.error).toBe('Tool "lookup_population" failed: no city named Atlantis');
    expect(fourth?.action).toEqual({ thought: 'Twice 5120.', action: 'finish', action_input: '10240' });
    expect(fourth?.verdict).toEqual({ stop: true, reason: 'finish_action' });
    // The last prompt shows the earlier steps, including the failures.
    const lastPrompt = fourth?.prompt.map((m) => m.content).join('\n') ?? '';
    expect(lastPrompt).toContain('Result: 5120');
    expect(lastPrompt).toContain('Format error: not valid JSON');
    expect(lastPrompt).toContain('Error: Tool "lookup_population" failed: no city named Atlantis');
    // Each step's recorded prompt is exactly what the server received.
    trajectory.steps.forEach((step, i) => {
      expect(step.prompt).toEqual((server.requests[i]!.body as { messages: unknown }).messages);
    });
    expect(events.map((e) => e.type)).toEqual([
      ...['step-start', 'tool-result', 'verdict', 'step-end'],
      ...['step-start', 'verdict', 'step-end'],
      ...['step-start', 'tool-result', 'verdict', 'step-end'],
      ...['step-start', 'verdict', 'step-end'],
    ]);
  });

  it('records a tool that hangs as a timeout and goes on', async () => {
    server.push(action('wait', { seconds: 999 }), action('finish', 'gave up waiting'));
    // The tool never returns: finishing at all shows the runner stopped waiting for it.
    const trajectory = await runFlow('q', agent(), { toolTimeoutMs: 50 });
    expect(trajectory.steps[0]?.toolResult?.error).toBe('Tool "wait" timed out after 0.05 s.');
    expect(trajectory).toMatchObject({ termination: 'finished', answer: 'gave up waiting' });
  });

  it('stops at the step limit and lets the generator answer from memory', async () => {
    server.push(
      action('lookup_population', { city: 'Brisk' }),
      action('lookup_population', { city: 'Veloria' }),
      ollamaReply('Answer: 93120'),
    );
    const trajectory = await runFlow('Sum of both populations?', agent({ generatorModel: true, rules: { maxSteps: 2 } }));
    expect(trajectory).toMatchObject({ termination: 'max_steps', answer: '93120' });
    const generatorPrompt = (server.requests[2]!.body as { messages: Array<{ content: string }> }).messages[1]?.content;
    expect(generatorPrompt).toContain('Result: 5120');
    expect(generatorPrompt).toContain('Result: 88000');
  });

  it('runs tools through a prepared executor registry, with its output limit, and leaves it to the caller', async () => {
    const disposed: Array<string | undefined> = [];
    const shout: Tool<{ text: string }> = {
      name: 'shout',
      description: 'Repeats text loudly.',
      inputSchema: z.object({ text: z.string() }),
      async execute({ text }) {
        return { output: text.toUpperCase().repeat(500), truncated: false, durationMs: 0 };
      },
      dispose: async (taskId) => {
        disposed.push(taskId);
      },
    };
    const registry = createToolRegistry({ tools: [shout as Tool], maxOutputChars: 200 });
    server.push(action('shout', 'hey'), action('lookup_population', 'Brisk'), action('finish', 'done'));
    // The planner knows a tool the registry lacks.
    const { tools: _unused, ...modules } = agent({ tools: [shout, lookupTool] });
    const trajectory = await runFlow('q', { ...modules, registry }, { taskId: 'task-r' });
    expect(trajectory.steps[0]?.toolResult).toMatchObject({ truncated: true });
    expect(trajectory.steps[0]?.toolResult?.output.length).toBeLessThanOrEqual(200);
    expect(trajectory.steps[0]?.toolResult?.output).toMatch(/^HEYHEY.*characters cut/s);
    expect(trajectory.steps[1]?.toolResult?.error).toBe('Unknown tool "lookup_population"; known tools: shout.');
    expect(trajectory.answer).toBe('done');
    // The registry is the caller's: the run does not dispose its task state.
    expect(disposed).toEqual([]);
  });

  it('ends with termination "error" when the planner repeats itself verbatim', async () => {
    server.push(action('lookup_population', { city: 'Brisk' }), action('lookup_population', { city: 'Brisk' }));
    const trajectory = await runFlow('q', agent());
    expect(trajectory.termination).toBe('error');
    expect(trajectory.error).toMatch(/repeated the same action/);
    expect(trajectory.steps).toHaveLength(2);
    expect(trajectory.answer).toBeNull();
  });

  it('ends with termination "error" naming the URL when the planner model is unreachable', async () => {
    server.push({ kind: 'json', status: 500, body: { error: 'model crashed' } });
    const trajectory = await runFlow('q', agent({ generatorModel: true }));
    expect(trajectory.termination).toBe('error');
    expect(trajectory.error).toContain(`${server.url}/api/chat`);
    expect(trajectory.error).toContain('HTTP 500');
    expect(trajectory.steps).toHaveLength(0);
    // The generator, on the same failed model, is not asked.
    expect(trajectory.answer).toBeNull();
    expect(server.requests).toHaveLength(1);
  });

  it('is cancelled through an AbortSignal, keeping the steps done so far', async () => {
    server.push(action('lookup_population', { city: 'Brisk' }), action('wait', { seconds: 999 }));
    const controller = new AbortController();
    // The tool cancels the run once it is running, and never returns by itself.
    const cancellingWait: Tool<{ seconds: number }> = {
      ...hangingTool,
      execute: () => {
        setTimeout(() => controller.abort(), 20);
        return new Promise(() => {});
      },
    };
    // The tool never returns: finishing at all shows the run stopped waiting for it.
    const trajectory = await runFlow('q', agent({ tools: [lookupTool, cancellingWait] }), {
      signal: controller.signal,
    });
    expect(trajectory.termination).toBe('error');
    expect(trajectory.error).toBe('Cancelled.');
    expect(trajectory.steps).toHaveLength(2);
    expect(trajectory.steps[1]?.toolResult?.error).toBe('Tool "wait" was cancelled.');
    expect(trajectory.answer).toBeNull();
  });

  it('stops a slow planner at the time limit', async () => {
    server.push({ ...action('finish', 'late'), delayMs: 20_000 } as never);
    const started = Date.now();
    const trajectory = await runFlow('q', agent(), { timeLimitMs: 100 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(trajectory).toMatchObject({ termination: 'timeout', steps: [], answer: null });
  });

  it('survives a listener that throws', async () => {
    server.push(action('finish', '1'));
    const trajectory = await runFlow('q', {
      ...agent(),
      listener: () => {
        throw new Error('display broke');
      },
    });
    expect(trajectory.answer).toBe('1');
  });
});
