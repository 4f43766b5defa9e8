import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { cutMiddle } from './cut-middle';
import { createInTaskMemory, restoreInTaskMemory } from './in-task-memory';
import { renderMemory } from './render-memory';
import type { MemoryEntry } from './step-entry';

const steps: MemoryEntry[] = [
  {
    index: 0,
    thought: 'Look up the capital.',
    action: 'corpus_search',
    actionInput: { query: 'capital of Veloria' },
    toolOutput: 'Doc 3: The capital of Veloria is Brisk.\n',
  },
  { index: 1, thought: '', action: null, actionInput: null, parseError: 'not valid JSON (Unexpected end)' },
  {
    index: 2,
    thought: 'Count letters.',
    action: 'python',
    actionInput: { code: 'len("Brisk")' },
    toolOutput: '',
    toolError: 'NameError: name lenn is not defined',
  },
];

describe('in-task memory', () => {
  it('renders every step in full style', () => {
    const memory = createInTaskMemory('Q', steps);
    expect(memory.render()).toBe(
      [
        'Step 1:\nThought: Look up the capital.\nAction: corpus_search {"query":"capital of Veloria"}\nResult: Doc 3: The capital of Veloria is Brisk.',
        'Step 2:\nFormat error: not valid JSON (Unexpected end)',
        'Step 3:\nThought: Count letters.\nAction: python {"code":"len(\\"Brisk\\")"}\nError: NameError: name lenn is not defined',
      ].join('\n\n'),
    );
  });

  it('renders one line per step in compact style', () => {
    expect(renderMemory(steps, { style: 'compact' })).toBe(
      [
        '1. corpus_search {"query":"capital of Veloria"} -> Doc 3: The capital of Veloria is Brisk.',
        '2. ? -> format error',
        '3. python {"code":"len(\\"Brisk\\")"} -> error: NameError: name lenn is not defined',
      ].join('\n'),
    );
  });

  it('cuts a long tool output in the middle, keeping its head and tail', () => {
    const output = `HEAD${'x'.repeat(10_000)}TAIL`;
    const text = renderMemory([{ ...steps[0]!, toolOutput: output }], { maxOutputChars: 200 });
    expect(text).toContain('Result: HEAD');
    expect(text).toMatch(/TAIL$/);
    expect(text).toMatch(/\.\.\.\[\d+ chars cut\]\.\.\./);
    expect(text.length).toBeLessThan(400);
  });

  it('drops the oldest steps first and never exceeds the budget', () => {
    const many: MemoryEntry[] = Array.from({ length: 30 }, (_, index) => ({
      index,
      thought: `t${index}`,
      action: 'python',
      actionInput: { code: `print(${index})` },
      toolOutput: String(index).repeat(50),
    }));
    for (const budgetChars of [50, 300, 1000, 5000]) {
      const text = renderMemory(many, { budgetChars });
      expect(text.length).toBeLessThanOrEqual(budgetChars);
    }
    const text = renderMemory(many, { budgetChars: 1000 });
    expect(text).toMatch(/^\(\d+ earlier steps omitted\)/);
    expect(text).toContain('Step 30:');
    expect(text).not.toContain('Step 1:');
  });

  it('round-trips through JSON', () => {
    const memory = createInTaskMemory('What is the capital?', steps);
    const restored = restoreInTaskMemory(JSON.stringify(memory));
    expect(restored.toJSON()).toEqual(memory.toJSON());
    expect(restored.render({ style: 'compact' })).toBe(memory.render({ style: 'compact' }));
  });

  it('rejects a bad snapshot or an out-of-order step with a clear error', () => {
    expect(() => restoreInTaskMemory({ version: 2, question: 'q', entries: [] })).toThrow(/version/);
    expect(() => restoreInTaskMemory('{"version":')).toThrow(/not valid JSON/);
    const memory = createInTaskMemory('q');
    const error = (() => {
      try {
        memory.record({ ...steps[0]!, index: 4 });
      } catch (caught) {
        return caught;
      }
    })();
    expect(AgentFlowError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toBe('In-task memory expected step index 0, got 4.');
  });
});

describe('cutMiddle', () => {
  it('keeps short text and respects any limit', () => {
    expect(cutMiddle('short', 10)).toBe('short');
    for (const max of [0, 1, 5, 20, 31, 100]) expect(cutMiddle('a'.repeat(500), max).length).toBeLessThanOrEqual(max);
  });
});
