import { createRandom, type Tool, type Trajectory, trajectorySchema } from '@agentflow/core';
import { createToolRegistry } from '@agentflow/executor';
import { createOllamaModel } from '@agentflow/llm';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, type RecordedRequest, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createMonteCarloLabeller } from '../../../prm/src/label/monte-carlo-labeller';
import { createGenerator } from '../generator/generator';
import { runFlow } from '../loop/run-flow';
import { createFlowCompleter, type FlowCompletionContext } from './flow-completer';

const action = (name: string, input: unknown) => ollamaReply(JSON.stringify({ thought: '', action: name, action_input: input }));
const bodyOf = (request: RecordedRequest) =>
  request.body as { messages: Array<{ content: string }>; options?: { seed?: number } };

/**
 * The policy's stand-in on the wire: after the prefix (two results) it calls the counter,
 * then finishes with an answer that depends on the sampling seed it was sent.
 */
function policyReply(request: RecordedRequest) {
  const body = bodyOf(request);
  const results = body.messages.map((message) => message.content).join('\n').split('Result: ').length - 1;
  if (results < 3) return action('counter', {});
  return action('finish', (body.options?.seed ?? 0) % 2 === 0 ? '5120' : '5121');
}

describe('createFlowCompleter', () => {
  let server: LoopbackServer;
  let counts: Map<string, number>;
  let disposed: Array<string | undefined>;
  /** Per-task state: how many times this task called it. */
  const counter: Tool<Record<string, never>> = {
    name: 'counter',
    description: 'Counts its calls in this task.',
    inputSchema: z.object({}),
    async execute(_input, { taskId }) {
      const count = (counts.get(taskId) ?? 0) + 1;
      counts.set(taskId, count);
      return { output: String(count), truncated: false, durationMs: 0 };
    },
    async dispose(taskId) {
      disposed.push(taskId);
      if (taskId) counts.delete(taskId);
    },
  };
  const lookup: Tool<{ city: string }> = {
    name: 'lookup_population',
    description: 'Returns the population of a city.',
    inputSchema: z.object({ city: z.string() }),
    async execute({ city }) {
      return { output: city === 'Brisk' ? '5120' : '?', truncated: false, durationMs: 0 };
    },
  };
  const tools = [counter, lookup];

  beforeEach(async () => {
    server = await startLoopbackServer(policyReply);
    counts = new Map();
    disposed = [];
  });
  afterEach(async () => server.close());

  const planner = (context: FlowCompletionContext) =>
    createPlanner({
      model: createOllamaModel({ model: 'policy', endpoints: [server.url], maxRetries: 0 }),
      tools,
      maxRepairs: 0,
      seed: context.seed,
    });

  /** counter -> 1, lookup Brisk -> 5120, finish. */
  async function source(): Promise<Trajectory> {
    server.push(action('counter', {}), action('lookup_population', { city: 'Brisk' }), action('finish', '5120'));
    const model = createOllamaModel({ model: 'policy', endpoints: [server.url], maxRetries: 0 });
    return runFlow(
      'Population of Brisk?',
      { planner: createPlanner({ model, tools, maxRepairs: 0 }), tools, verifier: createVerifier(), generator: createGenerator() },
      { trajectoryId: 'src', taskId: 'task-7' },
    );
  }

  it('runs n independent continuations after step j and checks each answer; the same Random repeats them', async () => {
    const trajectory = await source();
    disposed = [];
    const completions: Trajectory[] = [];
    const seeds: number[] = [];
    const complete = createFlowCompleter({
      createPlanner: (context) => {
        seeds.push(context.seed);
        return planner(context);
      },
      tools,
      isCorrect: (answer) => answer === '5120',
      limits: { maxSteps: 6, replayTools: ['counter'] },
      concurrency: 3,
      onCompletion: (completion) => completions.push(completion),
    });
    const prefix = { trajectory: { ...trajectory, steps: trajectory.steps.slice(0, 2) }, step: { stepIndex: 1 } };
    const requestsBefore = server.requests.length;
    const outcomes = await complete(prefix, 6, createRandom(11));

    expect(outcomes).toHaveLength(6);
    completions.sort((a, b) => a.id.localeCompare(b.id));
    expect(completions.map((completion) => completion.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `src:after-1:${i}`));
    for (const [i, completion] of completions.entries()) {
      expect(trajectorySchema.parse(completion)).toEqual(completion);
      expect(completion.taskId).toBe('task-7');
      expect(completion.steps.slice(0, 2)).toEqual(trajectory.steps.slice(0, 2));
      expect(completion.steps.map((step) => step.index)).toEqual([0, 1, 2, 3]);
      // Replayed once, then called once: 2 in every completion, so no two shared a counter.
      expect(completion.steps[2]?.toolResult?.output).toBe('2');
      expect(completion.steps[2]?.prompt.map((message) => message.content).join('\n')).toContain('Result: 5120');
      expect(outcomes[i]).toBe(completion.answer === '5120');
    }
    // Each completion sampled with its own seed (the planner adds the step index).
    expect(new Set(seeds).size).toBe(6);
    const sent = server.requests.slice(requestsBefore).map((request) => bodyOf(request).options?.seed);
    expect(new Set(sent)).toEqual(new Set(seeds.flatMap((seed) => [seed + 2, seed + 3])));
    // Each completion's tool state was released; none was left behind.
    expect(new Set(disposed).size).toBe(6);
    expect(counts.size).toBe(0);

    expect(await complete(prefix, 6, createRandom(11))).toEqual(outcomes);
    const others = await Promise.all([1, 2, 3, 4].map((seed) => complete(prefix, 6, createRandom(seed))));
    expect(others.some((other) => JSON.stringify(other) !== JSON.stringify(outcomes))).toBe(true);
  });

  it("is the `complete` of @agentflow/prm's Monte-Carlo labeller, with a shared executor registry", async () => {
    const trajectory = await source();
    const registry = createToolRegistry({ tools: tools as Tool[] });
    const complete = createFlowCompleter({
      createPlanner: planner,
      registry,
      isCorrect: (answer) => answer === '5120',
      limits: { replayTools: ['counter'] },
    });
    const labeller = createMonteCarloLabeller({ complete, samples: 4, random: createRandom(5) });
    const { examples, failures } = await labeller.label([trajectory]);
    expect(failures).toEqual([]);
    expect(examples.map((example) => example.stepIndex)).toEqual([0, 1, 2]);
    // After the finish step every completion repeats the recorded answer, which is right.
    expect(examples[2]?.provenance).toEqual({ labeller: 'monte-carlo', samples: 4, successes: 4 });
    for (const example of examples) {
      expect(example.label).toBe(example.provenance.successes! / 4);
    }
    // The shared registry keeps no completion's state.
    expect(counts.size).toBe(0);
    const again = await createMonteCarloLabeller({ complete, samples: 4, random: createRandom(5) }).label([trajectory]);
    expect(again.examples).toEqual(examples);
  });

  it("stops each completion at the continued trajectory's step budget, the prefix counted", async () => {
    const trajectory = await source();
    const completions: Trajectory[] = [];
    const asked: Array<string | undefined> = [];
    const complete = createFlowCompleter({
      createPlanner: planner,
      tools,
      isCorrect: (answer) => answer === '5120',
      limits: { maxSteps: 6, replayTools: ['counter'] },
      maxStepsFor: (continued) => {
        asked.push(continued.taskId);
        return 3;
      },
      onCompletion: (completion) => completions.push(completion),
    });
    const prefix = { trajectory: { ...trajectory, steps: trajectory.steps.slice(0, 2) }, step: { stepIndex: 1 } };
    // Within 6 steps every completion would call the counter and then finish; its budget of 3 leaves only the counter.
    expect(await complete(prefix, 4, createRandom(11))).toEqual([false, false, false, false]);
    expect(asked).toEqual(['task-7']);
    for (const completion of completions) {
      expect(completion).toMatchObject({ termination: 'max_steps', answer: null });
      expect(completion.steps.map((step) => step.action?.action)).toEqual(['counter', 'lookup_population', 'counter']);
    }
  });

  it('stops starting completions after one fails, and rejects with its error', async () => {
    const trajectory = await source();
    let started = 0;
    const complete = createFlowCompleter({
      createPlanner: (context) => {
        started++;
        return planner(context);
      },
      tools,
      isCorrect: () => {
        throw new Error('no reference answer for task-7');
      },
      concurrency: 2,
    });
    await expect(complete({ trajectory, step: { stepIndex: 1 } }, 8, createRandom(1))).rejects.toThrow(
      'no reference answer for task-7',
    );
    expect(started).toBe(2);
  });

  it('rejects a bad n or concurrency, naming the value', async () => {
    expect(() => createFlowCompleter({ createPlanner: planner, tools, isCorrect: () => true, concurrency: 0 })).toThrow(
      'createFlowCompleter: concurrency must be a positive integer, got 0.',
    );
    const complete = createFlowCompleter({ createPlanner: planner, tools, isCorrect: () => true });
    const trajectory = await source();
    await expect(complete({ trajectory, step: { stepIndex: 0 } }, 0, createRandom(1))).rejects.toThrow(
      'complete: n must be a positive integer, got 0.',
    );
  });
});
