import type { Trajectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { wilsonInterval } from '../metrics/accuracy';
import type { BenchmarkEvalSettings } from './benchmark-eval-settings';
import type { EvalRecord } from './eval-record';
import { formatEvalSummary, summarizeEval } from './eval-summary';

const settings = (samples: number): BenchmarkEvalSettings => ({
  planner: 'ollama:m',
  template: 'full',
  data: { path: '/d.json', format: 'agentflow-json', sha256: '0'.repeat(64), years: null, limit: null, fields: null, benchmark: null },
  fixedModules: null,
  judge: null,
  python: true,
  tools: { webSearch: null, wikipedia: null, mcp: [] },
  samples,
  maxSteps: 10,
  maxTokens: 512,
  temperature: 0.8,
  seed: 0,
  timeLimitS: 300,
  memory: null,
});

const record = (itemId: string, sample: number, correct: boolean): EvalRecord => ({
  itemId,
  sample,
  trajectoryId: `eval-${itemId}-${sample}`,
  seed: 1,
  answer: correct ? '1' : '2',
  extracted: correct ? '1' : '2',
  correct,
  method: 'numeric',
  f1: null,
  judge: null,
  steps: 1,
  toolCalls: 0,
  formatErrors: 0,
  termination: 'finished',
  durationMs: 1,
  finishedAt: new Date(0).toISOString(),
});

const trajectory = (id: string, steps: number): Trajectory => ({
  id,
  question: 'q',
  steps: Array.from({ length: steps }, (_, index) => ({
    index,
    prompt: [],
    completion: '',
    truncated: false,
    action: index === steps - 1 ? { thought: '', action: 'finish', action_input: '1' } : { thought: '', action: 'python', action_input: { code: '1' } },
    timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
  })),
  answer: '1',
  termination: 'finished',
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
});

describe('summarizeEval', () => {
  it('reports accuracy with its Wilson interval, pass@k and avg@k over items with every sample', () => {
    // Item a: 1 of 2 right; item b: 2 of 2; item c: one sample recorded so far.
    const records = [record('a', 0, true), record('a', 1, false), record('b', 0, true), record('b', 1, true), record('c', 0, false)];
    const summary = summarizeEval(settings(2), ['a', 'b', 'c'], [...records, record('a', 0, false)], [trajectory('eval-a-0', 2), trajectory('eval-b-0', 1)]);
    const interval = wilsonInterval(3, 5);
    expect(summary).toMatchObject({ complete: false, items: 3, itemsRecorded: 2, total: 5, correct: 3, accuracy: 0.6, ci95: [interval.lower, interval.upper] });
    expect(summary.passAtK).toEqual({ k: 2, value: 1 });
    expect(summary.avgAtK).toEqual({ k: 2, value: 0.75 });
    expect(summary.meanSteps).toBe(1.5);
    expect(summary.meanToolCalls).toBe(0.5);
  });

  it("reports the rule checker's score with mean F1, and the judge's over the runs it could read", () => {
    const qa = { ...settings(1), data: { ...settings(1).data, benchmark: 'hotpotqa' as const }, judge: 'openai:gpt-4o' };
    const verdict = (correct: boolean | null) => ({ mode: 'direct' as const, correct, analysis: 'scripted', extractedOption: null });
    const records = [
      { ...record('a', 0, true), f1: 1, judge: verdict(true) },
      { ...record('b', 0, false), f1: 0.5, judge: verdict(true) },
      { ...record('c', 0, false), f1: 0, judge: verdict(null) },
    ];
    const summary = summarizeEval(qa, ['a', 'b', 'c'], records, []);
    expect(summary.benchmark).toBe('hotpotqa');
    expect(summary.scores.deterministic).toMatchObject({ checker: 'exact_match_f1', correct: 1, total: 3, f1: 0.5 });
    const interval = wilsonInterval(2, 2);
    expect(summary.scores.judge).toEqual({ model: 'openai:gpt-4o', accuracy: 1, ci95: [interval.lower, interval.upper], correct: 2, judged: 2, failed: 1 });
    expect(formatEvalSummary(summary)).toContain('accuracy 0.333 (1/3, 95% CI');
    expect(formatEvalSummary(summary)).toContain('F1 0.500, judge 1.000 (2/2, 1 unreadable)');
    expect(summarizeEval(settings(1), ['a'], [record('a', 0, true)], []).scores).toMatchObject({ deterministic: { checker: 'by_item', f1: null }, judge: null });
  });

  it('leaves pass@k out with one sample', () => {
    const summary = summarizeEval(settings(1), ['a'], [record('a', 0, true)], []);
    expect(summary).toMatchObject({ complete: true, accuracy: 1, total: 1 });
    expect(summary.passAtK).toBeUndefined();
  });
});
