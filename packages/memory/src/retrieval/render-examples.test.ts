import { describe, expect, it } from 'vitest';
import { conformanceRecords } from '../cross-task/conformance/memory-store-conformance';
import { renderExamples } from './render-examples';

const [paris, berlin, product] = conformanceRecords;

describe('renderExamples', () => {
  it('renders question, steps and answer of each example, numbered in rank order', () => {
    expect(renderExamples([paris!, berlin!], 10_000)).toBe(
      [
        'Example 1',
        'Question: What is the capital of France?',
        'Steps: search("capital of France") -> Paris is the capital',
        'Answer: Paris',
        '',
        'Example 2',
        'Question: What is the capital of Germany?',
        'Steps: search("Germany capital") -> Berlin',
        'Answer: Berlin',
        '',
      ].join('\n'),
    );
  });

  it('never exceeds the budget and keeps examples whole, skipping one that does not fit', () => {
    const long = { ...berlin!, trajectory: 'x'.repeat(500) };
    const full = renderExamples([paris!, long, product!], 100_000);
    const first = renderExamples([paris!], 100_000);
    const budget = first.length + 1 + renderExamples([product!], 100_000).length;
    const rendered = renderExamples([paris!, long, product!], budget);
    expect(rendered.length).toBeLessThanOrEqual(budget);
    expect(rendered).toContain('Answer: Paris');
    expect(rendered).not.toContain('xxxx');
    expect(rendered).toContain('Example 2\nQuestion: What is 17 times 23?');
    expect(full.length).toBeGreaterThan(budget);
  });

  it('returns an empty string when nothing fits', () => {
    expect(renderExamples([paris!], 10)).toBe('');
    expect(renderExamples([], 1000)).toBe('');
  });
});
