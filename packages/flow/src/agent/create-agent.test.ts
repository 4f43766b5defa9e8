import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, type Tool, trajectorySchema } from '@agentflow/core';
import { createToolRegistry } from '@agentflow/executor';
import { createOllamaModel } from '@agentflow/llm';
import { createSqliteMemoryStore } from '@agentflow/memory';
import { createCompactPromptTemplate } from '@agentflow/planner';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, type RecordedRequest, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createCrossTaskMemory } from '../cross-task/cross-task-memory';
import { createAgent } from './create-agent';

const populations: Record<string, number> = { Brisk: 5120, Veloria: 88_000 };

const lookup: Tool<{ city: string }> = {
  name: 'lookup_population',
  description: 'Returns the population of a city.',
  inputSchema: z.object({ city: z.string().describe('City name') }),
  async execute({ city }) {
    const value = populations[city];
    if (value === undefined) throw new Error(`no city named ${city}`);
    return { output: String(value), truncated: false, durationMs: 0 };
  },
};

const action = (name: string, input: unknown) => ollamaReply(JSON.stringify({ thought: '', action: name, action_input: input }));
const promptOf = (request: RecordedRequest) => (request.body as { messages: Array<{ content: string }> }).messages.map((message) => message.content).join('\n');
const optionsOf = (request: RecordedRequest) => (request.body as { options: { seed?: number; temperature?: number; num_predict?: number } }).options;

describe('createAgent against scripted loopback Ollama servers', () => {
  let planner: LoopbackServer;
  let fixed: LoopbackServer;
  beforeEach(async () => {
    [planner, fixed] = await Promise.all([startLoopbackServer(), startLoopbackServer()]);
  });
  afterEach(async () => {
    await Promise.all([planner.close(), fixed.close()]);
  });

  const plannerModel = () => createOllamaModel({ model: 'qwen3:8b', endpoints: [planner.url], maxRetries: 0 });
  const fixedModel = () => createOllamaModel({ model: 'qwen3:32b', endpoints: [fixed.url], maxRetries: 0 });

  it('runs a task to an answer with the tools it was given, seeded and sampled as configured', async () => {
    const agent = createAgent({ model: plannerModel(), tools: [lookup], temperature: 0.5, maxTokens: 64, maxSteps: 4 });
    planner.push(action('lookup_population', { city: 'Brisk' }), action('finish', '10240'));
    const trajectory = await agent.run('What is twice the population of Brisk?', { seed: 7, taskId: 'brisk', trajectoryId: 't-1' });

    expect(trajectorySchema.parse(trajectory)).toEqual(trajectory);
    expect(trajectory).toMatchObject({ id: 't-1', taskId: 'brisk', termination: 'finished', answer: '10240' });
    expect(trajectory.steps[0]?.toolResult).toMatchObject({ output: '5120' });
    // The catalogue is the given tools; each decision is seeded by the run's seed plus its step.
    const [first, second] = planner.requests;
    expect(promptOf(first!)).toContain('- lookup_population: Returns the population of a city.');
    expect(promptOf(second!)).toContain('Result: 5120');
    expect([optionsOf(first!), optionsOf(second!)]).toEqual([
      { temperature: 0.5, seed: 7, num_predict: 64 },
      { temperature: 0.5, seed: 8, num_predict: 64 },
    ]);
    expect(agent.limits).toEqual({ maxSteps: 4, timeLimitMs: 300_000 });
  });

  it('asks the configured fixed verifier after a tool step and lets the fixed generator write the answer', async () => {
    const agent = createAgent({
      model: plannerModel(),
      tools: [lookup],
      fixedModules: { verifierModel: fixedModel(), generatorModel: fixedModel() },
    });
    planner.push(action('lookup_population', { city: 'Veloria' }));
    fixed.push(ollamaReply('{"analysis": "The population is known.", "stop": true}'), ollamaReply('Answer: 88000'));
    const trajectory = await agent.run('How many people live in Veloria?');

    expect(trajectory).toMatchObject({ termination: 'finished', answer: '88000' });
    expect(trajectory.steps).toHaveLength(1);
    expect(trajectory.steps[0]?.verdict).toMatchObject({ stop: true, reason: 'llm_stop' });
    expect(planner.requests).toHaveLength(1);
    expect(fixed.requests.map((request) => (request.body as { model: string }).model)).toEqual(['qwen3:32b', 'qwen3:32b']);
    expect(promptOf(fixed.requests[1]!)).toContain('Write the final answer');
  });

  it('without fixed modules, stops by the rules alone at maxSteps, with no answer and no other model asked', async () => {
    const agent = createAgent({ model: plannerModel(), tools: [lookup], maxSteps: 2, timeLimitMs: 20_000 });
    planner.push(action('lookup_population', { city: 'Brisk' }), action('lookup_population', { city: 'Veloria' }));
    const trajectory = await agent.run('Which city is larger, Brisk or Veloria?');

    expect(trajectory).toMatchObject({ termination: 'max_steps', answer: null });
    expect(trajectory.steps.map((step) => step.toolResult?.output)).toEqual(['5120', '88000']);
    expect(planner.requests).toHaveLength(2);
    expect(fixed.requests).toHaveLength(0);
    expect(agent.verifier).toMatchObject({ maxSteps: 2, timeLimitMs: 20_000, needsMemoryText: false });
  });

  it("stops a run at its own step budget when it is below the agent's, and at the agent's otherwise", async () => {
    const agent = createAgent({ model: plannerModel(), tools: [lookup], maxSteps: 3, timeLimitMs: 20_000 });
    planner.push(action('lookup_population', { city: 'Brisk' }), action('lookup_population', { city: 'Veloria' }));
    const budgeted = await agent.run('Which city is larger, Brisk or Veloria?', { taskId: 'cities', maxSteps: 2 });
    expect(budgeted).toMatchObject({ termination: 'max_steps', answer: null });
    expect(budgeted.steps).toHaveLength(2);
    expect(planner.requests).toHaveLength(2);

    // A budget above the agent's own limit does not raise it.
    planner.push(action('lookup_population', { city: 'Brisk' }), action('lookup_population', { city: 'Veloria' }), action('lookup_population', { city: 'Brisk' }));
    const capped = await agent.run('Which city is larger, Brisk or Veloria?', { maxSteps: 10 });
    expect(capped).toMatchObject({ termination: 'max_steps', answer: null });
    expect(capped.steps).toHaveLength(3);

    // A finish within the budget answers as before.
    planner.push(action('finish', '88000'));
    expect(await agent.run('How many people live in Veloria?', { maxSteps: 1 })).toMatchObject({ termination: 'finished', answer: '88000' });
    await expect(agent.run('How many people live in Veloria?', { taskId: 'veloria', maxSteps: 0 })).rejects.toThrow(
      "A run's maxSteps must be a positive integer, got 0 (task veloria).",
    );
  });

  it('runs through a prepared registry, its tools shown by the prompt template given', async () => {
    const registry = createToolRegistry({ tools: [lookup as Tool<unknown>] });
    const agent = createAgent({ model: plannerModel(), registry, template: createCompactPromptTemplate(), maxRepairs: 0 });
    planner.push(action('lookup_population', { city: 'Brisk' }), action('finish', '5120'));
    const trajectory = await agent.run('How many people live in Brisk?');

    expect(trajectory).toMatchObject({ termination: 'finished', answer: '5120' });
    // The compact template's one-line tool list, from the registry's tools.
    expect(promptOf(planner.requests[0]!)).toContain('Tools: lookup_population(');
  });

  it("shows cross-task memory's solved examples, except those of the task excluded", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'flow-agent-')), 'memory.sqlite');
    const memory = createCrossTaskMemory({ store: createSqliteMemoryStore({ path }), k: 2 });
    const agent = createAgent({ model: plannerModel(), tools: [lookup], memory });
    const question = 'What is twice the population of Brisk?';

    planner.push(action('lookup_population', { city: 'Brisk' }), action('finish', '10240'));
    const first = await agent.run(question, { taskId: 'brisk' });
    expect(promptOf(planner.requests[0]!)).not.toContain('Solved examples');
    expect(await memory.remember(first, 1)).toBe(true);

    planner.push(action('finish', '10240'));
    await agent.run(question, { taskId: 'brisk', excludeTaskId: 'brisk' });
    expect(promptOf(planner.requests[2]!)).not.toContain('Solved examples');

    planner.push(action('finish', '10240'));
    await agent.run(question, { taskId: 'brisk-again' });
    expect(promptOf(planner.requests[3]!)).toContain('Steps: lookup_population {"city":"Brisk"} -> 5120; finish 10240\nAnswer: 10240');
    await memory.close();
  });

  it('refuses invalid limits when assembled, before any run', () => {
    const attempt = () => createAgent({ model: plannerModel(), tools: [lookup], maxSteps: 0 });
    expect(attempt).toThrow(/maxSteps/);
    try {
      attempt();
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'INVALID_CONFIG')).toBe(true);
    }
  });
});
