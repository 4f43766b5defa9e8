import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveBenchmarkEvalSettings } from './resolve-benchmark-eval-settings';

describe('resolveBenchmarkEvalSettings with AgentFlow benchmarks', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentflow-eval-settings-'));
  const bamboogle = join(folder, 'bamboogle.json');
  writeFileSync(bamboogle, JSON.stringify([{ pid: '0', question: 'Who?', answer: ['x'], query: 'Who?' }]));

  it('looks a name up in the datasets folder and records the benchmark and the judge', () => {
    const settings = resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: 'bamboogle' }, datasetsDir: folder, judge: 'openai:gpt-4o' });
    expect(settings.data).toMatchObject({ path: bamboogle, format: 'agentflow-json', benchmark: 'bamboogle', fields: null });
    expect(settings.judge).toBe('openai:gpt-4o');
    expect(settings.tools).toEqual({ webSearch: null, wikipedia: null, mcp: [] });
    // A local planner is recorded by its absolute folder, so a resume from elsewhere names the same one.
    expect(resolveBenchmarkEvalSettings({ planner: 'local:runs/p', data: { path: 'bamboogle' }, datasetsDir: folder }).planner).toBe(`local:${resolve('runs/p')}`);
  });

  it('tells the benchmark by the file name, unless a field mapping says the file is read otherwise', () => {
    expect(resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: bamboogle } }).data.benchmark).toBe('bamboogle');
    expect(resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: bamboogle, fields: { id: 'pid' } } }).data.benchmark).toBeNull();
    expect(resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: bamboogle, benchmark: null } }).data.benchmark).toBeNull();
    expect(resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: bamboogle } }).judge).toBeNull();
    expect(() => resolveBenchmarkEvalSettings({ planner: 'ollama:m', data: { path: bamboogle, benchmark: 'bamboogle', fields: { id: 'pid' } } })).toThrow(
      'the benchmark bamboogle is read with its own fields as agentflow-json; leave the field mapping (--fields) out',
    );
  });
});
