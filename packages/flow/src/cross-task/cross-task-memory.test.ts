import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@agentflow/core';
import { createOllamaModel } from '@agentflow/llm';
import { createSqliteMemoryStore } from '@agentflow/memory';
import { createPlanner } from '@agentflow/planner';
import { createVerifier } from '@agentflow/verifier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../llm/src/testing/loopback-server';
import { createGenerator } from '../generator/generator';
import { runFlow } from '../loop/run-flow';
import { createCrossTaskMemory } from './cross-task-memory';

const lookup: Tool<{ city: string }> = {
  name: 'lookup_population',
  description: 'Returns the population of a city.',
  inputSchema: z.object({ city: z.string().describe('City name') }),
  execute: async ({ city }) => ({ output: city === 'Brisk' ? '5120' : 'unknown', truncated: false, durationMs: 0 }),
};

const action = (name: string, input: unknown) => ollamaReply(JSON.stringify({ thought: '', action: name, action_input: input }));

describe('cross-task memory in the loop (embedded SQLite)', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  it("shows a second run of a question the first run's solution, and keeps only solved tasks", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'flow-memory-')), 'memory.sqlite');
    const memory = createCrossTaskMemory({ store: createSqliteMemoryStore({ path }), k: 2 });
    const model = createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url], maxRetries: 0 });
    const modules = { planner: createPlanner({ model, tools: [lookup], maxRepairs: 0 }), tools: [lookup], verifier: createVerifier(), generator: createGenerator() };
    const question = 'What is twice the population of Brisk?';
    const run = async (id: string) => {
      const examples = await memory.examplesFor(question);
      return runFlow(question, { ...modules, ...(examples ? { examples } : {}) }, { trajectoryId: id, taskId: 'brisk' });
    };

    server.push(action('lookup_population', { city: 'Brisk' }), action('finish', '10240'));
    const first = await run('first');
    expect(first.answer).toBe('10240');
    const promptOf = (index: number) => (server.requests[index]!.body as { messages: Array<{ content: string }> }).messages.map((message) => message.content).join('\n');
    const firstPrompt = promptOf(0);
    expect(firstPrompt).not.toContain('Solved examples');
    // A wrong run is not kept; the right one is.
    expect(await memory.remember({ ...first, id: 'wrong', answer: '7' }, 0)).toBe(false);
    expect(await memory.remember(first, 1)).toBe(true);

    server.push(action('finish', '10240'));
    await run('second');
    const secondPrompt = promptOf(2);
    expect(secondPrompt).toContain('Solved examples of similar questions');
    expect(secondPrompt).toContain('Steps: lookup_population {"city":"Brisk"} -> 5120; finish 10240\nAnswer: 10240');
    await memory.close();

    // The store is a file: a new process (here, a new store on the same path) sees what was kept.
    const reopened = createCrossTaskMemory({ store: createSqliteMemoryStore({ path }), k: 2 });
    expect(await reopened.examplesFor(question)).toContain('Answer: 10240');
    expect(await reopened.examplesFor('')).toBe('');
    // Another sample of the same task does not see its solution.
    expect(await reopened.examplesFor(question, { excludeTaskId: 'brisk' })).toBe('');
    expect(await reopened.examplesFor(question, { excludeTaskId: 'other' })).toContain('Answer: 10240');
    await reopened.close();
  });
});
