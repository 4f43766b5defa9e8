import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveEvalSettings } from './resolve-eval-settings';

describe('agentflow eval --data NAME --datasets-dir DIR --judge SPEC', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentflow-eval-options-'));
  const gpqa = join(folder, 'gpqa.json');
  writeFileSync(gpqa, JSON.stringify([{ pid: '0', question: 'Q?', choices: ['A. 1', 'B. 2'], answer: 'B. 2', query: 'Q?' }]));

  it('reads a benchmark by name from --datasets-dir, with the judge, and keeps both on --resume', () => {
    const settings = resolveEvalSettings({ planner: 'ollama:m', data: 'gpqa', datasetsDir: folder, judge: 'openai:gpt-4o', limit: '1' });
    expect(settings.data).toMatchObject({ path: gpqa, benchmark: 'gpqa', limit: 1 });
    expect(settings.judge).toBe('openai:gpt-4o');
    expect(resolveEvalSettings({}, settings)).toEqual(settings);
  });

  it('refuses a judge that is not ollama:MODEL or openai:MODEL, and a name with no file', () => {
    expect(() => resolveEvalSettings({ planner: 'ollama:m', data: 'gpqa', datasetsDir: folder, judge: 'gpt-4o' })).toThrow('--judge "gpt-4o" is not one of ollama:MODEL or openai:MODEL');
    expect(() => resolveEvalSettings({ planner: 'ollama:m', data: 'medqa', datasetsDir: folder })).toThrow(`${join(folder, 'medqa.json')} is missing`);
  });
});
