import { AgentFlowError, type Tool } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCorpusSearchTool } from '../search/corpus-search-tool';
import { createToolRegistry } from './tool-registry';

const echo: Tool<{ text: string; times?: number }> = {
  name: 'echo',
  description: 'Repeats text.',
  inputSchema: z.object({ text: z.string().describe('What to say.'), times: z.number().int().min(1).optional() }),
  async execute(input) {
    return { output: input.text.repeat(input.times ?? 1), truncated: false, durationMs: 0 };
  },
};

function tool(name: string, execute: Tool['execute'], extra: Partial<Tool> = {}): Tool {
  return { name, description: `${name} tool`, inputSchema: z.object({}), execute, ...extra };
}

const context = { taskId: 'task-1' };

describe('createToolRegistry', () => {
  it('runs a tool with validated input', async () => {
    const registry = createToolRegistry({ tools: [echo as Tool] });
    const result = await registry.execute({ tool: 'echo', input: { text: 'ab', times: 2 } }, context);
    expect(result).toMatchObject({ output: 'abab', truncated: false });
    expect(result.error).toBeUndefined();
  });

  it('names the unknown tool and the known ones', async () => {
    const registry = createToolRegistry({ tools: [echo as Tool, createCorpusSearchTool({ documents: [] }) as Tool] });
    const result = await registry.execute({ tool: 'pyhton', input: {} }, context);
    expect(result.error).toBe('Unknown tool "pyhton"; known tools: echo, corpus_search.');
    expect(() => registry.get('pyhton')).toThrow('Unknown tool "pyhton"; known tools: echo, corpus_search.');
    try {
      registry.get('x');
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'NOT_FOUND')).toBe(true);
    }
  });

  it('names the invalid field, what was expected and what came', async () => {
    const registry = createToolRegistry({ tools: [echo as Tool] });
    const result = await registry.execute({ tool: 'echo', input: { text: 7 } }, context);
    expect(result.error).toMatch(/^Invalid input for tool "echo": text: Invalid input: expected string, received number \(got \{"text":7\}; expected/);
  });

  it('fills the sole required string field from a plain string, and parses a JSON string', async () => {
    const registry = createToolRegistry({ tools: [echo as Tool] });
    expect((await registry.execute({ tool: 'echo', input: 'hello' }, context)).output).toBe('hello');
    expect((await registry.execute({ tool: 'echo', input: '{"text": "x", "times": 3}' }, context)).output).toBe('xxx');
  });

  it('turns a throwing tool into an error result', async () => {
    const registry = createToolRegistry({
      tools: [
        tool('boom', async () => {
          throw new Error('disk on fire');
        }),
        tool('sync-boom', () => {
          throw new AgentFlowError({ code: 'TOOL_ERROR', message: 'nope' });
        }),
        tool('garbage', async () => ({ nonsense: true }) as never),
      ],
    });
    expect((await registry.execute({ tool: 'boom', input: {} }, context)).error).toBe('Tool "boom" failed: disk on fire');
    expect((await registry.execute({ tool: 'sync-boom', input: {} }, context)).error).toBe('Tool "sync-boom" failed: [TOOL_ERROR] nope');
    expect((await registry.execute({ tool: 'garbage', input: {} }, context)).error).toMatch(/^Tool "garbage" returned a malformed result: output:/);
  });

  it('times out a hanging tool and aborts its signal', async () => {
    let aborted = false;
    const registry = createToolRegistry({
      timeoutMs: 50,
      tools: [
        tool('hang', (_input, toolContext) => {
          toolContext.signal.addEventListener('abort', () => {
            aborted = true;
          });
          return new Promise(() => undefined);
        }),
      ],
    });
    const result = await registry.execute({ tool: 'hang', input: {} }, context);
    expect(result.error).toBe('Tool "hang" timed out after 0.05 s.');
    expect(aborted).toBe(true);
  });

  it("stops when the caller's signal aborts", async () => {
    const registry = createToolRegistry({ tools: [tool('hang', () => new Promise(() => undefined))] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect((await registry.execute({ tool: 'hang', input: {} }, { taskId: 't', signal: controller.signal })).error).toBe('Tool "hang" was cancelled.');
    expect((await registry.execute({ tool: 'hang', input: {} }, { taskId: 't', signal: controller.signal })).error).toBe(
      'Tool "hang" was cancelled before it started.',
    );
  });

  it('cuts long output in the middle and marks it truncated', async () => {
    const registry = createToolRegistry({ maxOutputChars: 100, tools: [echo as Tool] });
    const result = await registry.execute({ tool: 'echo', input: { text: `${'a'.repeat(500)}${'z'.repeat(500)}` } }, context);
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThanOrEqual(100);
    expect(result.output).toMatch(/^a+\n\.\.\. \[\d+ characters cut\] \.\.\.\nz+$/);
  });

  it('lists the catalogue with JSON schemas of the inputs', () => {
    const registry = createToolRegistry({ tools: [echo as Tool] });
    expect(registry.catalogue()).toEqual([
      {
        name: 'echo',
        description: 'Repeats text.',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string', description: 'What to say.' }, times: { type: 'integer', minimum: 1, maximum: 9007199254740991 } },
          required: ['text'],
        },
      },
    ]);
  });

  it('refuses duplicate, reserved and malformed names, and bad settings', () => {
    const registry = createToolRegistry({ tools: [echo as Tool] });
    expect(() => registry.register(echo as Tool)).toThrow('A tool named "echo" is already registered.');
    expect(() => registry.register(tool('finish', async () => ({ output: '', truncated: false, durationMs: 0 })))).toThrow(/not "finish"/);
    expect(() => registry.register(tool('two words', async () => ({ output: '', truncated: false, durationMs: 0 })))).toThrow(/"two words" is not allowed/);
    expect(() => createToolRegistry({ timeoutMs: -1 })).toThrow('Tool registry setting timeoutMs must be a positive number, got -1.');
  });

  it('disposes every tool, even when one fails to', async () => {
    const disposed: Array<string | undefined> = [];
    const registry = createToolRegistry({
      tools: [
        tool('a', async () => ({ output: '', truncated: false, durationMs: 0 }), {
          dispose: async () => {
            throw new Error('x');
          },
        }),
        tool('b', async () => ({ output: '', truncated: false, durationMs: 0 }), {
          dispose: async (taskId) => {
            disposed.push(taskId);
          },
        }),
      ],
    });
    await registry.dispose('task-9');
    expect(disposed).toEqual(['task-9']);
  });
});
