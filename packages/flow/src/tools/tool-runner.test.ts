import type { Tool } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRunner } from './tool-runner';

const echo: Tool<{ text: string; times?: number }> = {
  name: 'echo',
  description: 'Repeats text.',
  inputSchema: z.object({ text: z.string(), times: z.number().int().optional() }),
  async execute({ text, times = 1 }) {
    return { output: text.repeat(times), truncated: false, durationMs: 1 };
  },
};
const context = () => ({ taskId: 't', signal: new AbortController().signal });
const run = (runner: ReturnType<typeof createToolRunner>, action: string, input: string | Record<string, unknown>) =>
  runner.run({ thought: '', action, action_input: input }, context());

describe('createToolRunner', () => {
  it('runs a tool with an object, a JSON string or a bare string input', async () => {
    const runner = createToolRunner([echo]);
    expect((await run(runner, 'echo', { text: 'a', times: 2 })).output).toBe('aa');
    expect((await run(runner, 'echo', '{"text": "b", "times": 3}')).output).toBe('bbb');
    expect((await run(runner, 'echo', 'plain')).output).toBe('plain');
  });

  it('reports unknown tools and invalid input as errors, naming what was expected', async () => {
    const runner = createToolRunner([echo]);
    expect((await run(runner, 'ehco', {})).error).toBe('Unknown tool "ehco"; available: echo.');
    expect((await run(runner, 'echo', { text: 5 })).error).toBe(
      'Invalid input for tool "echo": text: Invalid input: expected string, received number',
    );
  });

  it('cuts long output in the middle and flags it', async () => {
    const runner = createToolRunner([echo], { maxOutputChars: 100 });
    const result = await run(runner, 'echo', { text: 'x', times: 10_000 });
    expect(result.output.length).toBeLessThanOrEqual(100);
    expect(result.output).toContain('chars cut');
    expect(result.truncated).toBe(true);
  });

  it('rejects a malformed result from a buggy tool', async () => {
    const buggy: Tool = { ...echo, name: 'buggy', execute: async () => ({ text: 'no output field' }) as never };
    expect((await run(createToolRunner([buggy]), 'buggy', { text: 'a' })).error).toMatch(
      /^Tool "buggy" returned an invalid result: output:/,
    );
  });
});
